"""A private PulseAudio server with a null sink: a real-time virtual microphone and speaker.

For tests and benchmarks of the capture stage on machines without a sound card.
ALSA's `default` device is PulseAudio while PULSE_SERVER points at this server
(libasound2-plugins), and the sink's monitor is the default source, so what a
test plays into the sink (`play_file`) or what the stage plays itself is heard
by the capture stage at real-time pace. Stopping the server is a headset
being unplugged; starting it again is plugging it back in; SIGSTOP on `proc`
is a frozen server. The sink runs at `rate_hz`: 48 kHz (PipeWire's default and
many USB headsets') unless asked otherwise; tests run the stage at 44.1 kHz too.
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
from typing import TypeVar

DEFAULT_RATE_HZ = 48000
S = TypeVar("S", bound="SoundServer")


class SoundServer:
    """What a virtual microphone offers a test: `server` (for PULSE_SERVER), `rate_hz`, `proc` (to freeze),
    `start`, `stop` and `play_file` into its `kit` sink."""

    def __init__(self, tmp_dir: Path, socket: str, rate_hz: int = DEFAULT_RATE_HZ) -> None:
        self.rate_hz = rate_hz
        self.dir = Path(tmp_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.socket = self.dir / socket
        self.env = {**os.environ, "XDG_RUNTIME_DIR": str(self.dir), "PULSE_SERVER": f"unix:{self.socket}"}
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def server(self) -> str:
        return self.env["PULSE_SERVER"]

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def play_file(self, wav: Path) -> subprocess.Popen[bytes]:
        """Play a file into the sink (the microphone hears it), in the background."""
        return subprocess.Popen(["paplay", "--device=kit", str(wav)], env=self.env)


class PulseServer(SoundServer):
    def __init__(self, tmp_dir: Path, rate_hz: int = DEFAULT_RATE_HZ) -> None:
        super().__init__(tmp_dir, "native", rate_hz)

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["pulseaudio", "--daemonize=no", "--exit-idle-time=-1", "-n", "--use-pid-file=no",
             f"--load=module-native-protocol-unix socket={self.socket} auth-anonymous=1",
             f"--load=module-null-sink sink_name=kit rate={self.rate_hz} channels=2", "--load=module-always-sink"],
            env=self.env, stdout=subprocess.DEVNULL, stderr=(self.dir / "pulse.log").open("ab"))
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if subprocess.run(["pactl", "set-default-source", "kit.monitor"], env=self.env,
                              capture_output=True).returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError(f"pulseaudio did not start: {(self.dir / 'pulse.log').read_text()[-2000:]}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
        self.proc = None
        self.socket.unlink(missing_ok=True)


def pulse_available() -> bool:
    return all(shutil.which(tool) for tool in ("pulseaudio", "pactl", "paplay"))


def running_pulse(rate_hz: int = DEFAULT_RATE_HZ) -> contextlib.AbstractContextManager[PulseServer]:
    return running(PulseServer, rate_hz)


@contextlib.contextmanager
def running(kind: type[S], rate_hz: int = DEFAULT_RATE_HZ) -> Iterator[S]:
    """A started server of `kind` in a fresh short temp dir (a unix socket path has 108 bytes), removed after."""
    server = kind(Path(tempfile.mkdtemp(prefix="tcccd-snd-")), rate_hz)
    server.start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.dir, ignore_errors=True)
