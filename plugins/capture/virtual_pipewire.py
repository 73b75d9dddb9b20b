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
import shutil
import subprocess
import time
from pathlib import Path

from tcccd.plugins.capture.virtual_mic import DEFAULT_RATE_HZ, SoundServer, running

TOOLS = ("pipewire", "pipewire-pulse", "wireplumber", "dbus-daemon", "pactl", "paplay")


class PipeWireServer(SoundServer):
    def __init__(self, tmp_dir: Path, rate_hz: int = DEFAULT_RATE_HZ) -> None:
        super().__init__(tmp_dir, "pulse/native", rate_hz)
        self.env.update(XDG_CONFIG_HOME=str(self.dir / "config"), DBUS_SESSION_BUS_ADDRESS=f"unix:path={self.dir}/bus")
        self.procs: list[subprocess.Popen[bytes]] = []

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


def pipewire_available() -> bool:
    return all(shutil.which(tool) for tool in TOOLS)


def running_pipewire(rate_hz: int = DEFAULT_RATE_HZ) -> contextlib.AbstractContextManager[PipeWireServer]:
    return running(PipeWireServer, rate_hz)
