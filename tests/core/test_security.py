"""Remote access: loopback by default, CurveZMQ with authorised keys for anything else."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tcccd.wire.client import Client, CurveKeys
from tests.support.daemon import REPO, free_port, make_config
from tests.support.rawclient import RawClient, header

ECHO = [{"name": "echo", "plugin": "passthrough"}]


def generate(directory: Path, client: str = "client") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tcccd", "keys", "generate", str(directory), "--client", client],
                          capture_output=True, text=True, timeout=60, cwd=REPO)


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    result = generate(tmp_path / "keys")
    assert result.returncode == 0, result.stderr
    assert "server.key_secret" in result.stdout
    return tmp_path / "keys"


def test_keys_generate_writes_owner_only_secrets_and_authorises_the_client(keys: Path):
    assert (keys / "server.key_secret").stat().st_mode & 0o077 == 0
    assert (keys / "client.key_secret").stat().st_mode & 0o077 == 0
    assert [p.name for p in (keys / "authorized").iterdir()] == ["client.key"]


def test_non_loopback_bind_without_keys_is_refused(tmp_path: Path):
    config = make_config(tmp_path, ECHO, {"echo": ["echo"]}, client_endpoint=f"tcp://0.0.0.0:{free_port()}")
    path = tmp_path / "tcccd.yaml"
    path.write_text(yaml.safe_dump(config))
    result = subprocess.run([sys.executable, "-m", "tcccd", "--config", str(path), "run"], capture_output=True,
                            text=True, timeout=60, cwd=REPO)
    assert result.returncode == 2
    assert "refusing to bind tcp://0.0.0.0" in result.stderr and "tcccd keys generate" in result.stderr


def test_authorised_key_is_served_and_unknown_keys_are_refused(start_daemon, keys: Path, tmp_path: Path):
    port = free_port()
    start_daemon(ECHO, {"echo": ["echo"]}, client_endpoint=f"tcp://0.0.0.0:{port}",
                          curve_secret_key_file=str(keys / "server.key_secret"),
                          curve_authorized_dir=str(keys / "authorized"))
    endpoint = f"tcp://127.0.0.1:{port}"
    authorised = CurveKeys.from_files(keys / "client.key_secret", keys / "server.key")
    with _healthy_client(endpoint, authorised) as client:
        assert client.call("echo", payload=b"medical data").payload == b"medical data"
        events = client.subscribe(["profile"])
        events.close()
    assert generate(tmp_path / "stranger").returncode == 0
    stranger = CurveKeys.from_files(tmp_path / "stranger" / "client.key_secret", keys / "server.key")
    for curve, answered in ((authorised, True), (stranger, False), (None, False)):  # known, unknown, no key
        with RawClient(endpoint, curve) as raw:
            raw.send(header("ping", "knock", final=True))
            raw.collect(quiet_s=1.5)
        assert bool(raw.replies) == answered


def _healthy_client(endpoint: str, curve: CurveKeys) -> Client:
    """The conftest's wait_healthy has no keys: poll through a keyed client."""
    for _ in range(150):
        try:
            client = Client(endpoint, timeout_s=10, curve=curve)
        except ConnectionError:
            time.sleep(0.2)
            continue
        if client.status().state == "healthy":
            return client
        client.close()
        time.sleep(0.2)
    raise AssertionError(f"tcccd at {endpoint} did not become healthy")
