"""`tcccd-nvpmodel`: the only part of tcccd that runs as root, and all it does is switch power modes.

The daemon runs unprivileged with NoNewPrivileges, so it cannot run nvpmodel itself. This helper
listens on a unix socket (handed over by tcccd-nvpmodel.socket, group tcccd, mode 0660), reads one
JSON line `{"mode": "15W"}`, and runs `nvpmodel -m ID` for a mode that the box's own nvpmodel.conf
names and that needs no reboot. Nothing else the client sends reaches a command line: the name is
looked up, and only the id parsed from the config is passed on.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from tcccd.telemetry.nvpmodel import PowerModeError, current_mode, load_modes

SYSTEMD_FIRST_FD = 3
MAX_REQUEST_BYTES = 512
NVPMODEL_TIMEOUT_S = 20.0


def switch(root: Path, nvpmodel: str, request: Any) -> dict[str, Any]:
    """One request -> one answer; never raises on a bad request."""
    if not isinstance(request, dict) or not isinstance(request.get("mode"), str):
        return {"ok": False, "error": 'send one JSON line: {"mode": "<name from nvpmodel.conf>"}'}
    modes = load_modes(root)
    if modes is None:
        return {"ok": False, "error": f"no {root / 'etc/nvpmodel.conf'}: this is not a Jetson"}
    try:
        target = modes.by_name(request["mode"])
    except PowerModeError as exc:
        return {"ok": False, "error": str(exc)}
    running = current_mode(root, modes)
    if running is not None and running.id == target.id:
        return {"ok": True, "mode": target.name, "id": target.id, "changed": False}
    if modes.needs_reboot(target, running):
        return {"ok": False, "mode": target.name, "needs_reboot": True,
                "error": f"{target.name} changes the GPU's TPC mask ({running.tpc_mask if running else '?'} -> "
                         f"{target.tpc_mask}): it applies only at boot, so it is not switched live"}
    result = subprocess.run([nvpmodel, "-m", str(target.id)], stdin=subprocess.DEVNULL, capture_output=True,
                            text=True, timeout=NVPMODEL_TIMEOUT_S)
    if result.returncode != 0:
        return {"ok": False, "mode": target.name, "error": f"nvpmodel -m {target.id} exited {result.returncode}: "
                                                           f"{(result.stderr or result.stdout).strip()[-300:]}"}
    return {"ok": True, "mode": target.name, "id": target.id, "changed": True}


def serve_one(conn: socket.socket, root: Path, nvpmodel: str) -> None:
    with conn:
        conn.settimeout(5.0)
        try:
            line = conn.makefile("rb").readline(MAX_REQUEST_BYTES)
            request = json.loads(line)
        except (OSError, ValueError):
            request = None
        answer = switch(root, nvpmodel, request)
        print(json.dumps(answer), file=sys.stderr, flush=True)
        conn.sendall(json.dumps(answer).encode() + b"\n")


def listening_socket(path: str | None) -> socket.socket:
    """systemd's socket (LISTEN_FDS) when activated; else bind `path` (tests, manual runs)."""
    if os.environ.get("LISTEN_PID") == str(os.getpid()) and int(os.environ.get("LISTEN_FDS", "0")) >= 1:
        return socket.socket(fileno=SYSTEMD_FIRST_FD)
    if path is None:
        raise SystemExit("tcccd-nvpmodel: not socket-activated and no --socket PATH given")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.listen(4)
    return sock


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tcccd-nvpmodel", description=__doc__.splitlines()[0])
    parser.add_argument("--socket", help="unix socket to bind when not started by tcccd-nvpmodel.socket")
    parser.add_argument("--root", type=Path, default=Path("/"), help="host root holding etc/nvpmodel.conf")
    parser.add_argument("--nvpmodel", default="/usr/sbin/nvpmodel", help="the nvpmodel binary")
    args = parser.parse_args(argv)
    server = listening_socket(args.socket)
    while True:
        conn, _ = server.accept()
        serve_one(conn, args.root, args.nvpmodel)


if __name__ == "__main__":
    sys.exit(main())
