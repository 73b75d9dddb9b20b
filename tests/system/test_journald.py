"""Logs under systemd: structured journal entries; outside systemd: the usual renderer."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import textwrap

import pytest
import structlog

from tcccd.system.journald import field_name, journal_fields, journald_processor


def stderr_stream_id() -> str:
    stat = os.fstat(2)
    return f"{stat.st_dev}:{stat.st_ino}"


def parse_native(datagram: bytes) -> dict[str, str]:
    """journald's native protocol: KEY=value lines, or KEY, newline, little-endian u64 size, bytes, newline."""
    fields: dict[str, str] = {}
    rest = datagram
    while rest:
        line, _, after = rest.partition(b"\n")
        if b"=" in line:
            key, _, value = line.partition(b"=")
            fields[key.decode()] = value.decode()
            rest = after
        else:
            (size,) = struct.unpack("<Q", after[:8])
            fields[line.decode()] = after[8:8 + size].decode()
            rest = after[8 + size + 1:]
    return fields


def test_off_without_journal_stream() -> None:
    assert journald_processor({}) is None


def test_off_when_stderr_is_not_the_journal_stream() -> None:
    assert journald_processor({"JOURNAL_STREAM": "1:2"}) is None
    assert journald_processor({"JOURNAL_STREAM": "garbage"}) is None


def test_on_when_stderr_is_the_journal_stream() -> None:
    assert callable(journald_processor({"JOURNAL_STREAM": stderr_stream_id()}))


def test_fields_of_an_event() -> None:
    fields = journal_fields({"event": "transcribed", "level": "warning", "timestamp": "2026-01-01T00:00:00Z",
                             "request_id": "r-7", "plugin": "whisper", "stage": "asr", "profile": "field",
                             "worker": "asr", "latency_ms": 41.5, "words": ["tourniquet"]})
    assert fields == {"MESSAGE": "transcribed", "PRIORITY": "4", "SYSLOG_IDENTIFIER": "tcccd",
                      "REQUEST_ID": "r-7", "PLUGIN": "whisper", "STAGE": "asr", "PROFILE": "field",
                      "WORKER": "asr", "LATENCY_MS": "41.5", "WORDS": "['tourniquet']"}


@pytest.mark.parametrize(("level", "priority"), [("debug", "7"), ("info", "6"), ("warning", "4"),
                                                 ("error", "3"), ("critical", "2"), ("unheard-of", "6")])
def test_priority_from_level(level: str, priority: str) -> None:
    assert journal_fields({"event": "x", "level": level})["PRIORITY"] == priority


def test_exception_text_goes_into_the_message() -> None:
    fields = journal_fields({"event": "worker died", "level": "error", "exception": "Traceback...\nKeyError: 'x'"})
    assert fields["MESSAGE"] == "worker died\nTraceback...\nKeyError: 'x'"
    assert "EXCEPTION" not in fields


@pytest.mark.parametrize(("key", "name"), [("request_id", "REQUEST_ID"), ("model.path", "MODEL_PATH"),
                                           ("_secret", "SECRET"), ("2nd", "F_2ND"), ("x" * 80, "X" * 64)])
def test_field_names_are_valid_for_journald(key: str, name: str) -> None:
    assert field_name(key) == name


def test_processor_drops_the_event_and_falls_back_to_stderr_when_journald_refuses(
        capsys: pytest.CaptureFixture[str]) -> None:
    processor = journald_processor({"JOURNAL_STREAM": stderr_stream_id()})
    assert processor is not None
    processor._sendv = refuse  # type: ignore[attr-defined]  # journald is the outside world here
    with pytest.raises(structlog.DropEvent):
        processor(None, "error", {"event": "worker died", "level": "error", "request_id": "r-9"})
    line = json.loads(capsys.readouterr().err)
    assert line["event"] == "worker died" and line["request_id"] == "r-9"


def refuse(*_fields: str) -> None:
    raise OSError(111, "Connection refused")


JOURNALD_STAND_IN = textwrap.dedent("""
    import json, os, socket, sys
    import structlog
    from tcccd.system.journald import journald_processor
    os.makedirs("/run/systemd/journal", exist_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("/run/systemd/journal/socket")
    sock.settimeout(5)
    stat = os.fstat(2)
    processor = journald_processor({"JOURNAL_STREAM": f"{stat.st_dev}:{stat.st_ino}"})
    structlog.configure(processors=[structlog.contextvars.merge_contextvars, structlog.processors.add_log_level,
                                    processor], logger_factory=structlog.PrintLoggerFactory(file=sys.stdout))
    structlog.contextvars.bind_contextvars(request_id="r-42", profile="field")
    try:
        raise KeyError("model.bin")
    except KeyError:
        structlog.get_logger().exception("model missing", plugin="whisper", stage="asr")
    sys.stdout.buffer.write(sock.recv(65536))
""")


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare(1)")
def test_entry_reaches_journald_socket_with_structured_fields() -> None:
    """A socket bound at journald's path, inside a private mount namespace, plays journald: the host is untouched."""
    command = ["unshare", "--mount", "sh", "-c", 'mount -t tmpfs tmpfs /run && exec "$0" -c "$1"',
               sys.executable, JOURNALD_STAND_IN]
    result = subprocess.run(command, capture_output=True, timeout=60)
    if result.returncode != 0 and b"unshare" in result.stderr:
        pytest.skip(f"no mount namespace here: {result.stderr.decode().strip()}")
    assert result.returncode == 0, result.stderr.decode()
    fields = parse_native(result.stdout)
    assert fields["MESSAGE"].startswith("model missing\nTraceback")
    assert "KeyError: 'model.bin'" in fields["MESSAGE"]
    assert fields["PRIORITY"] == "3"
    assert fields["SYSLOG_IDENTIFIER"] == "tcccd"
    assert (fields["REQUEST_ID"], fields["PROFILE"], fields["PLUGIN"], fields["STAGE"]) == ("r-42", "field",
                                                                                         "whisper", "asr")
