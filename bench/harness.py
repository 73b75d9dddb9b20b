"""What the benchmarks share: percentiles, and a tcccd started on a throwaway config.

Benchmarks run as scripts (`python bench/bus.py`), so this module sits beside
them and is imported as `harness`.
"""

from __future__ import annotations

import contextlib
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from tcccd.wire.client import Client, wait_until_healthy


def percentiles(values: list[float]) -> tuple[float, float]:
    """Median and p99."""
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def timed_ms(fn: Callable[[], object], repeats: int, warmup: int = 1) -> list[float]:
    """Milliseconds per call of `fn`, after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def running_daemon(workdir: Path, pipeline: list[dict[str, Any]], routes: dict[str, list[str]],
                   start_timeout_s: float = 300.0, daemon_extra: dict[str, Any] | None = None,
                   **top: Any) -> Iterator[Client]:
    """`tcccd run` in a subprocess on loopback ports; yields a client once it is healthy, stops it after.

    `daemon_extra` is laid over the daemon section (a memory budget, a log level)."""
    config = {
        "daemon": {"client_endpoint": f"tcp://127.0.0.1:{free_port()}",
                   "events_endpoint": f"tcp://127.0.0.1:{free_port()}", "runtime_dir": str(workdir / "run"),
                   "state_dir": str(workdir / "state"), "cache_dir": str(workdir / "cache"), "log_level": "warning",
                   **(daemon_extra or {})},
        "pipeline": pipeline,
        "routes": routes,
        **top,
    }
    path = workdir / "bench.yaml"
    path.write_text(yaml.safe_dump(config))
    daemon = subprocess.Popen([sys.executable, "-m", "tcccd", "--config", str(path), "run"])
    try:
        client = wait_until_healthy(config["daemon"]["client_endpoint"], start_timeout_s)
        with client:
            yield client
    finally:
        daemon.terminate()
        daemon.wait(30)


@contextlib.contextmanager
def whisper_daemon(cache_dir: Path, stage: dict[str, Any]) -> Iterator[Client]:
    """`tcccd run` with one whisper stage named asr (`stage`: its pipeline entry's extra keys, e.g. params and
    threads) under a profile with no overlay, so it decodes with the benchmark's own parameters; its ONNX
    graphs are exported into `cache_dir` first, so the worker loads them as a kit does after its first boot."""
    import tempfile

    from tcccd.plugins.whisper.engine.transcriber import Transcriber

    Transcriber.load(None, backend="onnxruntime", cache_dir=cache_dir / "whisper", threads=2)
    workdir = Path(tempfile.mkdtemp())
    profiles = workdir / "profiles"
    profiles.mkdir()
    (profiles / "bench.yaml").write_text("description: the benchmark's own parameters, no overlay\n")
    with running_daemon(workdir, [{"name": "asr", "plugin": "whisper", **stage}], {"transcribe": ["asr"]},
                        daemon_extra={"cache_dir": str(cache_dir)}, profile="bench",
                        profiles_dir=str(profiles)) as client:
        yield client
