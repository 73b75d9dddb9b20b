"""Jetson power modes by name: parsed from /etc/nvpmodel.conf, switched through the root helper.

Mode ids differ between SKUs and JetPack releases (15W is 0 on both, but 7W is 1 on JetPack 5 and 3 on
6.2 "super"), so a profile names the mode and the id is looked up on the box itself. A mode whose
TPC power-gating mask differs from the running one needs a reboot; nvpmodel would ask on a terminal,
so such a mode is never applied live, only reported.
"""

from __future__ import annotations

import json
import re
import socket
from dataclasses import dataclass, field
from pathlib import Path

from tcccd.telemetry.readings import read_text

CONF_PATH = Path("etc/nvpmodel.conf")
STATUS_PATH = Path("var/lib/nvpmodel/status")
MODE_HEADER = re.compile(r"<\s*POWER_MODEL\s+ID\s*=\s*(\d+)\s+NAME\s*=\s*([^\s>]+)\s*>", re.IGNORECASE)
DEFAULT_HEADER = re.compile(r"<\s*PM_CONFIG\s+DEFAULT\s*=\s*(\d+)\s*>", re.IGNORECASE)
MODE_NAME = re.compile(r"^[A-Za-z0-9_.+-]{1,32}$")
HELPER_TIMEOUT_S = 30.0


class PowerModeError(ValueError):
    """A mode name that cannot be applied; the message says why and which names exist."""


@dataclass
class PowerMode:
    id: int
    name: str
    settings: dict[str, str] = field(default_factory=dict)

    @property
    def tpc_mask(self) -> str | None:
        return self.settings.get("TPC_PG_MASK")


@dataclass
class PowerModes:
    modes: list[PowerMode]
    default_id: int | None = None

    def by_name(self, name: str) -> PowerMode:
        for mode in self.modes:
            if mode.name == name:
                return mode
        raise PowerModeError(f"power mode {name!r} is not in nvpmodel.conf (this box has: "
                             f"{', '.join(m.name for m in self.modes) or 'none'})")

    def by_id(self, mode_id: int) -> PowerMode | None:
        return next((m for m in self.modes if m.id == mode_id), None)

    def needs_reboot(self, target: PowerMode, current: PowerMode | None) -> bool:
        """A different TPC mask is a GPU floorsweeping change, which nvpmodel applies only at boot."""
        return current is not None and target.tpc_mask != current.tpc_mask


def parse_conf(text: str) -> PowerModes:
    modes: list[PowerMode] = []
    default_id = None
    section: PowerMode | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if header := MODE_HEADER.match(stripped):
            section = PowerMode(int(header.group(1)), header.group(2))
            modes.append(section)
        elif default := DEFAULT_HEADER.match(stripped):
            default_id, section = int(default.group(1)), None
        elif stripped.startswith("<"):
            section = None
        elif section is not None and len(parts := stripped.split()) >= 3 and not stripped.startswith("#"):
            section.settings[parts[1]] = parts[2]
    return PowerModes(modes, default_id)


def load_modes(root: Path) -> PowerModes | None:
    """The box's modes, or None where there is no nvpmodel (not a Jetson)."""
    text = read_text(root / CONF_PATH)
    return None if text is None else parse_conf(text)


def current_mode(root: Path, modes: PowerModes) -> PowerMode | None:
    """nvpmodel records the running mode in /var/lib/nvpmodel/status as `pmode:0002 ...`."""
    match = re.search(r"pmode:\s*(\d+)", read_text(root / STATUS_PATH) or "")
    return modes.by_id(int(match.group(1))) if match else None


def ask_helper(socket_path: str, name: str, timeout_s: float = HELPER_TIMEOUT_S) -> dict[str, object]:
    """Ask the root helper to switch to mode `name`; returns its JSON answer ({'ok': bool, ...})."""
    if not MODE_NAME.match(name):
        raise PowerModeError(f"{name!r} is not a power mode name (letters, digits, _ . + -)")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout_s)
        try:
            sock.connect(socket_path)
        except OSError as exc:
            raise PowerModeError(f"the power mode helper at {socket_path} does not answer ({exc.strerror}): "
                                 "is tcccd-nvpmodel.socket enabled?") from None
        sock.sendall(json.dumps({"mode": name}).encode() + b"\n")
        answer = sock.makefile("rb").readline(4096)
    try:
        return json.loads(answer)
    except ValueError:
        raise PowerModeError(f"the power mode helper answered nonsense: {answer[:80]!r}") from None
