"""install.sh into a staging tree (--root): what lands where, re-runs, operator edits, dry runs, uninstall.

A full install resolves torch and the model packages (minutes, gigabytes). These tests install a wheel built
from this checkout with `--extras none --pip-args "--no-deps --no-index"` into a real venv: every step of the
script runs, only dependency resolution is left to pip's own tests.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "install.sh"
DEFAULT_CONFIG = REPO / "daemon" / "default.yaml"


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "-w", str(out), str(REPO)], check=True, timeout=300)
    return next(out.glob("tcccd-*.whl"))


def install(root: Path, wheel: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [str(SCRIPT), "--root", str(root), "--wheel", str(wheel), "--extras", "none",
               "--pip-args", "--no-deps --no-index", "--python", sys.executable, *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    return result.stdout


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under root with its size and modification time: any change shows."""
    return {str(p.relative_to(root)): (p.lstat().st_size, p.lstat().st_mtime_ns) for p in root.rglob("*")}


@pytest.fixture(scope="module")
def staged(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("root")
    return root, ok(install(root, wheel))


def test_install_lays_out_the_tree(staged: tuple[Path, str]) -> None:
    root, output = staged
    assert (root / "etc/tcccd/tcccd.yaml").read_text() == DEFAULT_CONFIG.read_text()
    assert (root / "etc/systemd/system/tcccd.service").read_text() == (REPO / "systemd/tcccd.service").read_text()
    assert (root / "usr/share/doc/tcccd/operations.md").is_file()
    assert (root / "opt/tcccd/venv/bin/tcccd").is_file()
    assert "config" in output and "installed" in output
    for helper in ("tcccd-nvpmodel.socket", "tcccd-nvpmodel.service"):
        assert (root / "etc/systemd/system" / helper).read_text() == (REPO / "systemd" / helper).read_text()
    assert (root / "opt/tcccd/venv/bin/tcccd-nvpmodel").is_file(), "the helper unit's ExecStart must exist"


def test_installed_venv_runs_its_own_tcccd(staged: tuple[Path, str]) -> None:
    root, _ = staged
    python = root / "opt/tcccd/venv/bin/python"
    code = ("import tcccd, importlib.resources as r; print(tcccd.__file__); "
            "print(r.files('tcccd').joinpath('default.yaml').read_text())")
    result = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=60, cwd=root)
    module_file, _, default_text = ok(result).partition("\n")
    assert module_file.startswith(str(root / "opt/tcccd/venv")), "tcccd must come from the staged venv"
    assert default_text.rstrip("\n") == DEFAULT_CONFIG.read_text().rstrip("\n")


def test_host_steps_are_skipped_under_root(staged: tuple[Path, str]) -> None:
    root, output = staged
    assert f"skipped (--root {root}): useradd" in output
    assert f"skipped (--root {root}): systemctl" in output
    assert "+ useradd" not in output and "+ systemctl" not in output


def test_second_run_changes_nothing_and_says_so(staged: tuple[Path, str], wheel: Path) -> None:
    root, _ = staged
    before = snapshot(root)
    output = ok(install(root, wheel))
    assert "nothing changed" in output
    assert "venv" in output and "up to date" in output
    assert snapshot(root) == before


def test_config_follows_new_defaults_until_the_operator_edits_it(tmp_path: Path, wheel: Path) -> None:
    ok(install(tmp_path, wheel))
    config = tmp_path / "etc/tcccd/tcccd.yaml"
    old_default = "# default of an older release\nprofile: field\n"
    config.write_text(old_default)
    (tmp_path / "etc/tcccd/.tcccd.yaml.installed.sha256").write_text(hashlib.sha256(old_default.encode()).hexdigest())
    output = ok(install(tmp_path, wheel))
    assert config.read_text() == DEFAULT_CONFIG.read_text()
    assert "updated to the new default" in output
    assert not (tmp_path / "etc/tcccd/tcccd.yaml.new").exists()

    edited = config.read_text().replace("log_level: info", "log_level: debug")
    assert edited != config.read_text()
    config.write_text(edited)
    output = ok(install(tmp_path, wheel))
    assert config.read_text() == edited
    assert (tmp_path / "etc/tcccd/tcccd.yaml.new").read_text() == DEFAULT_CONFIG.read_text()
    assert "tcccd.yaml.new" in output
    assert "nothing changed" in ok(install(tmp_path, wheel))
    assert config.read_text() == edited


def test_dry_run_changes_nothing(tmp_path: Path, wheel: Path) -> None:
    output = ok(install(tmp_path, wheel, "--dry-run"))
    assert list(tmp_path.iterdir()) == []
    assert "-m venv" in output and "pip install" in output and "tcccd.yaml" in output
    assert "nothing was changed" in output


def test_dry_run_on_a_jetson_keeps_jetpack_packages(tmp_path: Path, wheel: Path) -> None:
    output = ok(install(tmp_path, wheel, "--dry-run", "--platform", "jetson"))
    assert "--system-site-packages" in output
    assert "keeping JetPack's torch" in output
    assert list(tmp_path.iterdir()) == []


def test_uninstall_keeps_config_and_state_then_purge_removes_them(tmp_path: Path, wheel: Path) -> None:
    ok(install(tmp_path, wheel))
    (tmp_path / "var/lib/tcccd").mkdir(parents=True)
    (tmp_path / "var/lib/tcccd/history.db").write_text("state")
    before = snapshot(tmp_path)
    ok(subprocess.run([str(SCRIPT), "--root", str(tmp_path), "--uninstall", "--dry-run"],
                      capture_output=True, text=True, timeout=60))
    assert snapshot(tmp_path) == before
    output = ok(subprocess.run([str(SCRIPT), "--root", str(tmp_path), "--uninstall"],
                               capture_output=True, text=True, timeout=60))
    assert not (tmp_path / "etc/systemd/system/tcccd.service").exists()
    assert not (tmp_path / "etc/systemd/system/tcccd-nvpmodel.socket").exists()
    assert not (tmp_path / "etc/systemd/system/tcccd-nvpmodel.service").exists()
    assert not (tmp_path / "opt/tcccd").exists()
    assert (tmp_path / "etc/tcccd/tcccd.yaml").is_file()
    assert (tmp_path / "var/lib/tcccd/history.db").is_file()
    assert f"skipped (--root {tmp_path}): userdel" in output
    ok(subprocess.run([str(SCRIPT), "--root", str(tmp_path), "--uninstall", "--purge"],
                      capture_output=True, text=True, timeout=60))
    assert not (tmp_path / "etc/tcccd").exists()
    assert not (tmp_path / "var/lib/tcccd").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--bogus"], "unknown option '--bogus'"),
    (["--purge"], "--purge only goes with --uninstall"),
    (["--platform", "mars"], "--platform must be jetson, generic or auto"),
    (["--wheel", "/nonexistent/tcccd.whl"], "is not a .whl file"),
    (["--extras", "asr;rm"], "--extras must be"),
    (["--python", "/nonexistent/python3"], "python '/nonexistent/python3' not found"),
])
def test_bad_options_fail_with_a_clear_message(tmp_path: Path, args: list[str], message: str) -> None:
    result = subprocess.run([str(SCRIPT), "--root", str(tmp_path), *args], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert message in result.stderr
    assert list(tmp_path.iterdir()) == []
