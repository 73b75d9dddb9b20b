"""The spoken commands that send the card to TAK, and the words the kit reads back before it sends.

"send nine line" or "send MIST" (optionally "for casualty two") asks for a
CASEVAC; the kit reads back what it would send and waits for a second, explicit
"send" (or "send it", "confirm send"); "cancel" drops it. A command is the whole
utterance, nothing else in it, so "say send to confirm" (the kit's own words,
should the echo gate ever let them through) or "send more gauze" is not one,
and a command is never a clinical fact: the card keeper marks it done without
the card stage. Whisper writes "nine line" as "9-line", "nine-line" or "nine
line", "MIST" as "mist" or "Mist": the text is folded to lower-case words first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from tcccd.tak.casevac import Casevac

NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty")
ASK = re.compile(r"^(?:please )?send (?:the |a )?(?P<what>nine line(?:r)?(?: medevac| casevac)?|mist(?: report)?|"
                 r"medevac|casevac)(?: request)?(?: (?:for )?(?:casualty|patient)(?: number)? (?P<n>[a-z0-9]+))?$")
MIST_WORDS = (("m", "mechanism"), ("i", "injuries"), ("s", "signs"), ("t", "treatments"))
CONFIRM = re.compile(r"^(?:send|send it|send now|confirm send|confirmed send)$")
CANCEL = re.compile(r"^(?:cancel|cancel send|cancel that|do not send|don't send|belay that)$")


@dataclass(frozen=True)
class Command:
    kind: Literal["ask", "confirm", "cancel"]
    what: str = ""  # ask: 'nine line' or 'MIST'
    casualty: int | None = None


def fold(text: str) -> str:
    words = re.sub(r"[^a-z0-9' ]+", " ", text.lower().replace("-", " "))
    return " ".join("nine" if w == "9" else w for w in words.split())


def parse(text: str) -> Command | None:
    """The command the whole utterance is, or None (then it is the card's)."""
    said = fold(text)
    if CONFIRM.match(said):
        return Command("confirm")
    if CANCEL.match(said):
        return Command("cancel")
    match = ASK.match(said)
    if match is None:
        return None
    n = match.group("n")
    casualty = int(n) if n and n.isdigit() else (NUMBER_WORDS.index(n) if n in NUMBER_WORDS else None)
    if n and not casualty:
        return None  # "send nine line for casualty fox": not a number, not a command
    return Command("ask", "MIST" if match.group("what").startswith("mist") else "nine line", casualty)


class SpokenCommands:
    """What the card keeper asks: is this transcript a command (not the card's)?"""

    def command(self, text: str) -> str | None:
        found = parse(text)
        return None if found is None else (f"{found.kind} {found.what}".strip())


def number(n: int) -> str:
    return NUMBER_WORDS[n] if 0 <= n < len(NUMBER_WORDS) else str(n)


def _casualties(numbers: tuple[int, ...]) -> str:
    words = [number(n) for n in numbers]
    if len(words) == 1:
        return f"casualty {words[0]}"
    return f"casualties {', '.join(words[:-1])} and {words[-1]}"


def readback(request: Casevac, what: str) -> str:
    """What the kit says before it sends: 'Nine line for casualty one: urgent one, litter one.'"""
    counts = [f"{name} {number(request.counts[name])}" for name in
              ("urgent", "priority", "routine", "litter", "ambulatory") if request.counts.get(name)]
    counts += [f"{category} {_casualties(c)}" for category, c in request.unmapped.items()]
    if what == "MIST":
        parts = [f"{_casualties((z.casualty,))}: " + (", ".join(name for key, name in MIST_WORDS if getattr(z, key))
                                                      or "nothing said") for z in request.zmists]
        text = f"MIST for {'; '.join(parts)}."
    else:
        text = f"Nine line for {_casualties(request.casualties)}: " + (
            ", ".join(counts) if counts else "no precedence or litter said") + "."
    if request.withheld:
        text += f" {number(request.withheld).capitalize()} entr{'y' if request.withheld == 1 else 'ies'} " \
                f"awaiting your check not sent."
    return text
