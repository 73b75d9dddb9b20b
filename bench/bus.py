"""Claim: a client's round trip through tcccd to a pass-through stage and back has p99 < 2 ms.

Side by side in one run, with 1 s of 16 kHz PCM (32 000 bytes):
  zmq-echo  a bare ZeroMQ DEALER -> ROUTER echo in another process (one hop each way): the floor
  tcccd     client -> daemon -> passthrough worker -> daemon -> client (two hops each way)
Usage: python bench/bus.py [--n 3000]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import tempfile
import time
from pathlib import Path

import zmq
from harness import free_port, percentiles, running_daemon

from tcccd.wire.protocol import AudioFormat, Message

PCM_1S = os.urandom(32000)


def _echo_server(endpoint: str) -> None:
    sock = zmq.Context().socket(zmq.ROUTER)
    sock.bind(endpoint)
    while True:
        sock.send_multipart(sock.recv_multipart())


def time_zmq_echo(n: int) -> list[float]:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    server = multiprocessing.Process(target=_echo_server, args=(endpoint,), daemon=True)
    server.start()
    sock = zmq.Context().socket(zmq.DEALER)
    sock.connect(endpoint)
    frames = Message("echo", payload=PCM_1S, audio=AudioFormat()).to_frames()
    times = []
    for i in range(n + 200):
        t0 = time.perf_counter()
        sock.send_multipart(frames)
        sock.recv_multipart()
        if i >= 200:
            times.append((time.perf_counter() - t0) * 1000)
    server.kill()
    return times


def time_tcccd(n: int, workdir: Path) -> list[float]:
    times = []
    with running_daemon(workdir, [{"name": "echo", "plugin": "passthrough"}], {"echo": ["echo"]}) as client:
        for i in range(n + 200):
            t0 = time.perf_counter()
            reply = client.call("echo", payload=PCM_1S, audio=AudioFormat())
            if i >= 200:
                times.append((time.perf_counter() - t0) * 1000)
    assert reply.payload == PCM_1S
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=3000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = {"zmq-echo (1 hop each way)": percentiles(time_zmq_echo(args.n)),
                "tcccd passthrough (2 hops)": percentiles(time_tcccd(args.n, Path(tmp)))}
    base_p50, base_p99 = rows["zmq-echo (1 hop each way)"]
    print(f"round trip of 1 s of 16 kHz PCM (32000 B), n={args.n}, {os.cpu_count()} CPUs")
    print(f"{'path':<28} {'p50 ms':>8} {'p99 ms':>8} {'p50 x':>7} {'p99 x':>7}")
    for name, (p50, p99) in rows.items():
        print(f"{name:<28} {p50:>8.3f} {p99:>8.3f} {p50 / base_p50:>7.2f} {p99 / base_p99:>7.2f}")
    p99 = rows["tcccd passthrough (2 hops)"][1]
    print(f"goal: tcccd p99 < 2 ms: {'met' if p99 < 2.0 else 'NOT met'} ({p99:.3f} ms)")


if __name__ == "__main__":
    main()
