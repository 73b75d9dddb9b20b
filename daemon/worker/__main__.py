"""`python -m tcccd.worker SPEC.json`: how the supervisor starts a worker process.

It leaves through os._exit, as multiprocessing's workers do: by then its stages are torn down and its sockets
closed, and the interpreter's own teardown only cost time (0.5-1 s more for a Whisper worker here, freeing torch's
modules one by one) or hung (PortAudio's terminate at exit under a frozen sound server), out of the lifeline's
reach once the interpreter is finalizing.
"""

import contextlib
import gc
import json
import os
import signal
import sys
import time
from pathlib import Path

import structlog

from tcccd.system import logs
from tcccd.wire import control as ctl
from tcccd.worker.lifeline import Lifeline, die_with_parent
from tcccd.worker.process import Worker


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    spec = json.loads(Path(argv[0]).read_text())
    daemon_alive = die_with_parent(spec["daemon_pid"])
    logs.configure(spec["log_level"], spec["log_format"], worker=spec["worker"])
    if not daemon_alive:
        structlog.get_logger().warning("the daemon that started this worker is gone; exiting",
                                       daemon_pid=spec["daemon_pid"])
        return 0
    if spec.get("cpus"):
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, spec["cpus"])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the daemon decides when workers stop
    worker = Worker(spec)
    lifeline = Lifeline(spec["daemon_pid"], worker)
    lifeline.start()
    worker.heartbeat.start()
    try:
        worker.start_stages()
    except Exception as exc:  # noqa: BLE001 - report why, then exit so the supervisor can back off
        structlog.get_logger().error("stage set-up failed", exc_info=True)
        worker.send_control(ctl.SetupFailed(error=f"{type(exc).__name__}: {exc}"))
        worker.heartbeat.stop()
        time.sleep(0.2)
        worker.ctx.destroy(linger=1000)
        return 2
    # What the stages loaded (models, lexicons, rules) stays for the worker's life: collected once, then kept out of
    # the collector's reach, so a full collection scans only what requests make (measured in bench/card.py: a
    # 500-word card update paused ~21 ms by one now and then without it).
    gc.collect()
    gc.freeze()
    worker.serve()
    lifeline.stopping("shutdown")  # from here the process has the stop grace to end, teardown and exit included
    worker.stop()
    return 0


code = main()
sys.stdout.flush()
sys.stderr.flush()
os._exit(code)
