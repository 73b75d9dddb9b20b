"""A private PipeWire (with pipewire-pulse and WirePlumber) and a null sink: the virtual microphone on PipeWire.

What many kits run instead of PulseAudio: ALSA's `default` device reaches it
through pipewire-pulse exactly as it reaches PulseAudio, so the capture stage
and the tests drive it the same way (tcccd.plugins.capture.virtual_mic's
interface: `server`, `rate_hz`, `proc`, `start`, `stop`, `play_file`).
WirePlumber needs a D-Bus session bus: a private one is started beside it.
`rate_hz` is the graph's clock rate (PipeWire's default is 48 kHz). `proc` is
the PipeWire daemon, which runs the graph: SIGSTOP on it freezes every stream
while pipewire-pulse still answers.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

TOOLS = ("pipewire", "pipewire-pulse", "wireplumber", "dbus-daemon", "pactl", "paplay")


class PipeWireServer:
    def __init__(self, tmp_dir: Path, rate_hz: int = 48000) -> None:
        self.rate_hz = rate_hz
        self.dir = Path(tmp_dir)
        self.socket = self.dir / "pulse" / "native"
        self.env = {**os.environ, "XDG_RUNTIME_DIR": str(self.dir), "XDG_CONFIG_HOME": str(self.dir / "config"),
                    "DBUS_SESSION_BUS_ADDRESS": f"unix:path={self.dir}/bus", "PULSE_SERVER": f"unix:{self.socket}"}
        self.procs: list[subprocess.Popen[bytes]] = []
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def server(self) -> str:
        return self.env["PULSE_SERVER"]

    def start(self) -> None:
        conf = self.dir / "config" / "pipewire" / "pipewire.conf.d"
        conf.mkdir(parents=True, exist_ok=True)
        (conf / "rate.conf").write_text(f"context.properties = {{\n  default.clock.rate = {self.rate_hz}\n"
                                        f"  default.clock.allowed-rates = [ {self.rate_hz} ]\n}}\n")
        log = (self.dir / "pipewire.log").open("ab")
        run = [["dbus-daemon", "--session", "--nofork", f"--address=unix:path={self.dir}/bus"], ["pipewire"],
               ["wireplumber"], ["pipewire-pulse"]]
        for command in run:
            self.procs.append(subprocess.Popen(command, env=self.env, stdout=subprocess.DEVNULL, stderr=log))
            if command[0] == "pipewire":
                self.proc = self.procs[-1]
            time.sleep(0.3)  # each needs the one before it (the bus, then the graph)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self._pactl("load-module", "module-null-sink", "sink_name=kit", f"rate={self.rate_hz}") and \
                    self._pactl("set-default-sink", "kit") and self._pactl("set-default-source", "kit.monitor"):
                return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"pipewire did not start: {(self.dir / 'pipewire.log').read_text()[-2000:]}")

    def _pactl(self, *args: str) -> bool:
        return subprocess.run(["pactl", *args], env=self.env, capture_output=True, timeout=10).returncode == 0

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)
        self.procs, self.proc = [], None

    def play_file(self, wav: Path) -> subprocess.Popen[bytes]:
        """Play a file into the sink (the microphone hears it), in the background."""
        return subprocess.Popen(["paplay", "--device=kit", str(wav)], env=self.env)


def pipewire_available() -> bool:
    return all(shutil.which(tool) for tool in TOOLS)


@contextlib.contextmanager
def running_pipewire(rate_hz: int = 48000) -> Iterator[PipeWireServer]:
    """A started PipeWire in a fresh short temp dir, stopped and removed after."""
    server = PipeWireServer(Path(tempfile.mkdtemp(prefix="tcccd-pw-")), rate_hz)
    server.start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.dir, ignore_errors=True)
