"""`wyoming:` in the config: whether the Wyoming front door is open, and where.

Wyoming has no authentication and no encryption. The door therefore listens on
loopback or a Unix socket unless the operator writes `allow_remote: true`, and
then the status report and the log say, every time, that it is unauthenticated.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, model_validator

LOOPBACK_NAMES = ("localhost", "ip6-localhost")
# Where each Wyoming connection's DEALER meets the broker: an in-process socket of the daemon's own ZeroMQ context.
DOOR_ENDPOINT = "inproc://tcccd-wyoming-door"


def is_local_uri(uri: str) -> bool:
    """unix:// and loopback tcp:// URIs are reachable only from this machine."""
    parsed = urlparse(uri)
    if parsed.scheme == "unix":
        return True
    host = parsed.hostname or ""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # 0.0.0.0, a host name or an interface: reachable from outside


class WyomingSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    uri: str = Field("tcp://127.0.0.1:10300", pattern=r"^(tcp://[^/]+:\d{1,5}|unix:///?.+)$",
                     description="tcp://HOST:PORT or unix://PATH")
    allow_remote: bool = Field(False, description="let a non-loopback uri listen: Wyoming is unauthenticated")
    max_audio_bytes: int = Field(32 * 1024 * 1024, ge=1024,
                                 description="one transcription's audio, buffered (streamed: what waits to be sent)")
    max_text_chars: int = Field(20_000, ge=1, description="one synthesis's text")
    max_connections: int = Field(16, ge=1, description="open at once; one more is answered `busy` and closed "
                                 "(each is a tcccd client of its own, so per-client caps alone do not bound them)")
    transcript_streaming: bool = Field(
        False, description="send audio to Whisper as it arrives (a tcccd `stream`) and each finished utterance as a "
        "transcript-chunk; only where `routes.stream` reaches the whisper stage. Off: one `transcribe` at audio-stop")

    @model_validator(mode="after")
    def _remote_needs_consent(self) -> WyomingSettings:
        if self.enabled and not is_local_uri(self.uri) and not self.allow_remote:
            raise ValueError(
                f"wyoming.uri {self.uri} is reachable from other machines and Wyoming has no authentication "
                f"(anyone on the network could hear transcripts and speak through the kit). Use "
                f"tcp://127.0.0.1:PORT or unix://PATH, or set wyoming.allow_remote: true to accept that")
        return self

    @property
    def unauthenticated_remote(self) -> bool:
        return self.enabled and not is_local_uri(self.uri)
