"""The wheel holds what an installed tcccd needs, under the right names."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_wheel_contents_and_console_script(tmp_path: Path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path), str(REPO)], check=True, timeout=300)
    [wheel] = tmp_path.glob("tcccd-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    modules = [f"tcccd/{path.relative_to(REPO / 'daemon')}" for path in (REPO / "daemon").rglob("*.py")]
    modules += [f"tcccd/plugins/{path.relative_to(REPO / 'plugins')}" for path in (REPO / "plugins").rglob("*.py")]
    assert "tcccd/worker/__main__.py" in modules and "tcccd/cli/main.py" in modules
    for required in (*modules, "tcccd/default.yaml", "tcccd/plugins/passthrough.py",
                     "tcccd/plugins/whisper/stage/plugin.py", "tcccd/plugins/piper/plugin.py",
                     "tcccd/plugins/snac/plugin.py",
                     "tcccd/profiles/field.yaml", "tcccd/profiles/emergency.yaml", "tcccd/profiles/training.yaml",
                     "tcccd/profiles/medical_vocab.txt", "tcccd/profiles/card/context.yaml",
                     "tcccd/plugins/card/plugin.py",
                     "tcccd/card/exports/card.schema.json"):
        assert required in names, f"{required} missing from {wheel.name}"
    assert not any(n.startswith(("daemon/", "plugins/", "tests/")) for n in names)
    dist_info = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    entry_points = zipfile.ZipFile(wheel).read(dist_info).decode()
    assert "tcccd = tcccd.cli.main:main" in entry_points
    for plugin in ("passthrough", "whisper", "piper", "snac", "card"):
        assert f"{plugin} = tcccd.plugins." in entry_points
