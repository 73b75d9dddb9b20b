"""`tcccd`: run the daemon, and talk to it as an operator or a script would."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from tcccd import config as cfg
from tcccd.cli import capture as capture_commands
from tcccd.cli import card as card_commands
from tcccd.cli import status_screen as status_mod
from tcccd.cli import telemetry as telemetry_commands
from tcccd.wire.client import Client, DaemonNotRunning, RequestFailed
from tcccd.wire.model import ReplyInvalid
from tcccd.wire.protocol import ProtocolError
from tcccd.wire.replies import Transcript

SYSTEM_CONFIG = Path("/etc/tcccd/tcccd.yaml")


def _config_path(args: argparse.Namespace) -> Path | None:
    explicit = args.config or os.environ.get("TCCCD_CONFIG")
    if explicit:
        return Path(explicit)
    return SYSTEM_CONFIG if SYSTEM_CONFIG.is_file() else None


def _endpoint(args: argparse.Namespace) -> str:
    if args.endpoint or os.environ.get("TCCCD_ENDPOINT"):
        return args.endpoint or os.environ["TCCCD_ENDPOINT"]
    return cfg.load(_config_path(args)).daemon.client_endpoint


def cmd_run(args: argparse.Namespace) -> int:
    import zmq

    from tcccd.core.daemon import Daemon
    from tcccd.system import logs
    from tcccd.system.security import InsecureBind

    config = cfg.load(_config_path(args))
    logs.configure(config.daemon.log_level, config.daemon.log_format)
    try:
        daemon = Daemon(config, _config_path(args))
    except InsecureBind as exc:
        print(f"tcccd: {exc}", file=sys.stderr)
        return 2
    try:
        return daemon.run()
    except zmq.ZMQError as exc:
        print(f"tcccd: cannot bind its sockets ({exc}); is another tcccd running on "
              f"{config.daemon.client_endpoint}?", file=sys.stderr)
        return 1


def cmd_status(args: argparse.Namespace) -> int:
    while True:
        code = _status_once(args)
        if not args.watch:
            return code
        time.sleep(args.watch)


def _status_once(args: argparse.Namespace) -> int:
    try:
        with Client(_endpoint(args), timeout_s=args.timeout) as client:
            report = client.status()
    except DaemonNotRunning as exc:
        print(json.dumps({"state": "not running", "error": str(exc)}) if args.json else str(exc))
        return status_mod.EXIT_NOT_RUNNING
    except (TimeoutError, RequestFailed, ProtocolError, ReplyInvalid) as exc:
        print(json.dumps({"state": "unknown", "error": str(exc)}) if args.json else f"tcccd state unknown: {exc}")
        return status_mod.EXIT_UNKNOWN
    if args.watch and not args.json:
        print("\033[2J\033[H", end="")
    print(json.dumps(report.to_data(), indent=2) if args.json else status_mod.render(report))
    return status_mod.exit_code(report)


def cmd_transcribe(args: argparse.Namespace) -> int:
    failed = 0
    with Client(_endpoint(args), timeout_s=args.deadline) as client:
        for path in args.files:
            try:
                transcript = Transcript.from_message(client.transcribe(path, deadline_s=args.deadline))
            except (RequestFailed, TimeoutError, OSError, ReplyInvalid) as exc:
                print(f"{path}: error: {exc}", file=sys.stderr)
                failed += 1
                continue
            if args.json:
                print(json.dumps({"file": path, **transcript.to_data()}))
            else:
                print(f"{path}: {transcript.text}" if len(args.files) > 1 else transcript.text)
    return 1 if failed else 0


def cmd_speak(args: argparse.Namespace) -> int:
    import numpy as np

    from tcccd.kit.audio import wav_bytes

    chunks, rate_hz = [], 0
    with Client(_endpoint(args), timeout_s=args.deadline) as client:
        for reply in client.speak(args.text, deadline_s=args.deadline, **({"play": True} if args.play else {})):
            if reply.payload:
                rate_hz = reply.audio.sample_rate_hz if reply.audio else rate_hz
                chunks.append(np.frombuffer(reply.payload, dtype="<i2"))
    if not chunks:
        print("tcccd: the daemon returned no audio", file=sys.stderr)
        return 1
    audio = np.concatenate(chunks).astype(np.float32) / 32768.0
    if args.output:
        Path(args.output).write_bytes(wav_bytes(audio, rate_hz))
    print(f"{args.output or 'played'}: {len(audio) / rate_hz:.2f} s at {rate_hz} Hz")
    return 0


def cmd_profile(args: argparse.Namespace) -> int:
    with Client(_endpoint(args), timeout_s=10) as client:
        info = client.profile_set(args.name, "set with tcccd profile set", args.for_s) \
            if args.action == "set" else client.profile_get()
    print(telemetry_commands.describe_profile(info))
    return 0


def cmd_plugins(args: argparse.Namespace) -> int:
    from tcccd.kit import registry

    for name, ep in sorted(registry.installed().items()):
        try:
            cls = registry.load(name)
            print(f"{name:<12} {ep.value:<48} in: {', '.join(cls.inputs)}  out: {', '.join(cls.outputs)}")
        except Exception as exc:  # noqa: BLE001 - one broken plugin must not hide the others
            print(f"{name:<12} {ep.value:<48} BROKEN: {exc}")
    return 0


def cmd_config_check(args: argparse.Namespace) -> int:
    config = cfg.load(args.file)
    stages = ", ".join(f"{s.name}({s.plugin})" for s in config.enabled_stages) or "none"
    print(f"{args.file}: OK (profile {config.profile}; stages: {stages})")
    return 0


def cmd_keys_generate(args: argparse.Namespace) -> int:
    from tcccd.system.security import generate

    paths = generate(Path(args.dir), args.client)
    print(f"server key pair: {paths['server_secret']} (daemon.curve_secret_key_file; keep it secret)\n"
          f"authorised clients: {paths['authorized_dir']} (daemon.curve_authorized_dir; add client *.key files)\n"
          f"client: give it {paths['client_secret']} and {paths['server_public']} "
          f"(TCCCD_CURVE_CLIENT_KEY, TCCCD_CURVE_SERVER_KEY)")
    return 0


def cmd_models_convert(args: argparse.Namespace) -> int:
    from tcccd.plugins.whisper.engine import convert

    return convert.main([str(args.src), str(args.dst)])


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tcccd", description="Voice daemon for a combat medic's kit.")
    p.add_argument("--config", help="config file (default: $TCCCD_CONFIG, /etc/tcccd/tcccd.yaml, embedded)")
    p.add_argument("--endpoint", help="daemon endpoint (default: $TCCCD_ENDPOINT or the config's)")
    # --config and --endpoint also work after the subcommand (`tcccd run --config FILE`, as the unit has it).
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    common.add_argument("--endpoint", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    sub = p.add_subparsers(dest="command", required=True)

    def command(name: str, help: str, func: Any, parent: Any = sub) -> argparse.ArgumentParser:
        parser = parent.add_parser(name, help=help, parents=[common])
        parser.set_defaults(func=func)
        return parser

    command("run", "run the daemon in the foreground", cmd_run)
    s = command("status", "health of the daemon: exit 0 healthy, 1 degraded, 3 not running, 4 unknown", cmd_status)
    s.add_argument("--json", action="store_true")
    s.add_argument("--watch", type=float, nargs="?", const=2.0, default=None, metavar="SECONDS")
    s.add_argument("--timeout", type=float, default=5.0)
    t = command("transcribe", "transcribe audio files through the running daemon", cmd_transcribe)
    t.add_argument("files", nargs="+")
    t.add_argument("--json", action="store_true", help="segments, timings and confidences")
    t.add_argument("--deadline", type=float, default=120.0)
    k = command("speak", "speak TEXT through the daemon into a WAV file, and/or on the kit's speaker", cmd_speak)
    k.add_argument("text")
    k.add_argument("-o", "--output", help="WAV file to write (needed unless --play)")
    k.add_argument("--play", action="store_true", help="play it on the kit's speaker (routes.speak.play)")
    k.add_argument("--deadline", type=float, default=60.0)
    r = command("profile", "show or switch the performance profile", cmd_profile)
    r.add_argument("action", nargs="?", choices=["get", "set"], default="get")
    r.add_argument("name", nargs="?")
    r.add_argument("--for", dest="for_s", type=telemetry_commands.duration_s, metavar="DURATION",
                   help="an override (e.g. 30m): battery/thermal caps are bypassed until it expires")
    command("plugins", "list installed plugins", cmd_plugins)
    telemetry_commands.register(sub, command, lambda args: cfg.load(_config_path(args)))
    capture_commands.register(sub, command, _endpoint)
    card_commands.register(sub, command, _endpoint)
    config_tools = sub.add_parser("config", help="config tools").add_subparsers(dest="config_command", required=True)
    command("check", "validate a config file without starting", cmd_config_check, config_tools).add_argument("file")
    key_tools = sub.add_parser("keys", help="CurveZMQ keys for remote access").add_subparsers(
        dest="keys_command", required=True)
    gen = command("generate", "write a server key pair and one authorised client key pair into DIR",
                  cmd_keys_generate, key_tools)
    gen.add_argument("dir")
    gen.add_argument("--client", default="client", help="name of the client key pair (default: client)")
    model_tools = sub.add_parser("models", help="model tools").add_subparsers(dest="models_command", required=True)
    conv = command("convert", "convert a CTranslate2 Whisper directory to an openai-whisper .pt", cmd_models_convert,
                   model_tools)
    conv.add_argument("src", type=Path)
    conv.add_argument("dst", type=Path)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "speak" and not (args.output or args.play):
        print("tcccd speak: say where the speech goes: -o FILE, --play, or both", file=sys.stderr)
        return 2
    if args.command == "profile" and args.action == "set" and not args.name:
        print("tcccd profile set: name the profile (emergency, field or training)", file=sys.stderr)
        return 2
    try:
        return args.func(args)
    except cfg.ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    except DaemonNotRunning as exc:
        print(exc, file=sys.stderr)
        return status_mod.EXIT_NOT_RUNNING
    except (RequestFailed, TimeoutError, ReplyInvalid) as exc:
        print(f"tcccd: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
