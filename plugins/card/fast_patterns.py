"""Patterns the card tries over every sentence, built and gated so that the regex engine does little work.

An alternation of many phrases bounded by word edges ("(?<![\\w-])(?:tourniquet|
tq|...)") makes Python's regex engine compare every phrase at every word start.
`first_grouped` gathers the phrases by their first character: two phrases that
start with different characters never match at the same place, so the order
that decides between phrases (the longest first) is kept, and at each place the
engine compares one character with a few dozen first characters instead.

A gate skips a pattern over a sentence that holds none of the strings the
pattern cannot match without: every match of `\\b(?:gave|given)\\s+it\\b` holds
"gave" or "given". The strings are read from the pattern as re's own parser
gives it: a run of literal characters (across word edges and look-arounds,
which take no characters), each alternative of an alternation, an optional part
as both forms; the most telling of a sequence's parts. Whatever the reading
does not know (a class of many characters, a group reference, case-insensitive
matching) requires nothing, so a pattern is skipped only where it could not
have matched: a gate changes no match, only the time spent
(tests/plugins/card/test_fast_patterns.py checks both).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

try:
    from re import _parser as _sre  # type: ignore[attr-defined]
except ImportError:  # Python 3.10: the same parser under its old name
    import sre_parse as _sre  # type: ignore[no-redef]

T = TypeVar("T")
_MOST = 64  # the most strings one part may be read as before it is read as requiring nothing
_ZERO_WIDTH = (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT)
_REPEATS = tuple(getattr(_sre, name) for name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
                 if hasattr(_sre, name))
_ATOMIC = getattr(_sre, "ATOMIC_GROUP", None)
Reading = tuple[frozenset[str] | None, bool]  # the strings, and whether the part matches exactly one of them
_PLAIN_FIRST = re.compile(r"[a-z0-9]")  # no other character matches one of these, in any case


def first_grouped(alternatives: list[tuple[str, str]]) -> str:
    """Regex alternatives in order of preference, each with the phrase it is written for, as one alternation
    gathered by the phrase's first character (the groups in order of first appearance, each in its own order);
    where a phrase starts with anything else, the alternatives joined as they are."""
    if not all(_PLAIN_FIRST.match(phrase) for phrase, _ in alternatives):
        return "|".join(regex for _, regex in alternatives)
    return _grouped(alternatives)


def _grouped(alternatives: list[tuple[str, str]]) -> str:
    by_first: dict[str, list[str]] = {}
    for phrase, regex in alternatives:
        by_first.setdefault(phrase[0], []).append(regex)
    return "|".join(group[0] if len(group) == 1 else "(?:" + "|".join(group) + ")" for group in by_first.values())


def required(pattern: re.Pattern[str]) -> frozenset[str] | None:
    """Strings of which every match of `pattern` holds at least one; None where no such strings are known."""
    if pattern.flags & re.IGNORECASE:
        return None
    strings, _ = _sequence(_sre.parse(pattern.pattern, pattern.flags).data)
    return strings if strings and "" not in strings else None


def _sequence(items: list[tuple[Any, Any]]) -> Reading:
    """Parts said one after another: exact parts next to each other join into longer strings ("no" + " " is not
    one, "wasn" + "['’]" + "t" is); the best of what the parts require stands for the whole."""
    best: frozenset[str] | None = None
    run = frozenset({""})
    whole = True  # every part exact and joined: the sequence matches exactly one of `run`
    for op, av in items:
        strings, exact = _part(op, av)
        if exact and strings is not None and len(run) * len(strings) <= _MOST:
            run = frozenset(a + b for a in run for b in strings)
            continue
        whole = False
        best = _better(best, run)
        run = strings if exact and strings is not None else frozenset({""})
        if not exact:
            best = _better(best, strings)
    if whole:
        return run, True
    return _better(best, run), False


def _part(op: Any, av: Any) -> Reading:
    if op is _sre.LITERAL:
        return frozenset({chr(av)}), True
    if op in _ZERO_WIDTH:
        return frozenset({""}), True
    if op is _sre.SUBPATTERN:
        _, add_flags, _, sub = av
        return (None, False) if add_flags & re.IGNORECASE else _sequence(sub.data)
    if op is _ATOMIC:
        return _sequence(av.data)
    if op is _sre.BRANCH:
        return _branch([_sequence(alternative.data) for alternative in av[1]])
    if op in _REPEATS:
        low, high, sub = av
        strings, exact = _sequence(sub.data)
        if low == high == 1:
            return strings, exact
        if low == 0 and high == 1 and exact and strings is not None:
            return strings | {""}, True  # "checks?": "check" or "checks"
        return (strings, False) if low >= 1 else (None, False)
    if op is _sre.IN and len(av) <= _MOST and all(o is _sre.LITERAL for o, _ in av):
        return frozenset(chr(c) for _, c in av), True
    return None, False


def _branch(alternatives: list[Reading]) -> Reading:
    """One of several alternatives: exact when each is, else each alternative's strings together."""
    if any(strings is None for strings, _ in alternatives):
        return None, False
    union = frozenset().union(*(strings for strings, _ in alternatives))  # type: ignore[misc]
    if all(exact for _, exact in alternatives) and len(union) <= _MOST:
        return union, True
    return (None, False) if "" in union else (union, False)


def _better(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    """The more telling of two requirements: the longer shortest string (rarer in speech), then fewer strings."""
    useful = [s for s in (a, b) if s and "" not in s]
    return max(useful, key=lambda s: (min(5, min(map(len, s))), -len(s))) if useful else None


def _any_of(strings: frozenset[str]) -> re.Pattern[str]:
    """Finds any of the strings, each as written: the longest first at each place, the first character compared
    once (whatever it is: a literal string's first character matches itself alone)."""
    ordered = sorted(strings, key=len, reverse=True)
    return re.compile(_grouped([(string, re.escape(string)) for string in ordered]))


def may_match_any(patterns: list[re.Pattern[str]]) -> Callable[[str, int, int], bool]:
    """A test that text[start:end] holds a string one of the patterns requires (always true where one of them
    requires nothing): where it is false, none of them can match there."""
    needs = [required(pattern) for pattern in patterns]
    if any(strings is None for strings in needs):
        return lambda text, start, end: True
    search = _any_of(frozenset().union(*needs)).search  # type: ignore[arg-type]
    return lambda text, start, end: search(text, start, end) is not None


class Gate:
    """One pattern, tried over a stretch of text only when the stretch holds one of the strings it requires."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.needs = required(pattern)
        self._held = _any_of(self.needs).search if self.needs is not None else None

    def may_match(self, text: str, start: int, end: int) -> bool:
        return self._held is None or self._held(text, start, end) is not None

    def finditer(self, text: str, start: int, end: int) -> Iterator[re.Match[str]]:
        """The pattern's matches in text[start:end], as `re.Pattern.finditer` gives them."""
        return self.pattern.finditer(text, start, end) if self.may_match(text, start, end) else iter(())


class Gates(Generic[T]):
    """Patterns with a value each, tried in their order over a stretch of text. The strings any of them requires
    are found in one pass: at each place the longest one said there, which stands for the shorter ones it starts
    with too (all said there); only the patterns whose strings the stretch holds are tried."""

    def __init__(self, patterns: list[tuple[re.Pattern[str], T]]) -> None:
        self.patterns = [(rx, value, required(rx)) for rx, value in patterns]
        strings = frozenset().union(*(needs for _, _, needs in self.patterns if needs))
        self._places = re.compile(f"(?=({_any_of(strings).pattern}))").finditer if strings else None
        self._let_through = {said: frozenset(i for i, (_, _, needs) in enumerate(self.patterns)
                                             if needs and any(said.startswith(n) for n in needs)) for said in strings}
        self._always = frozenset(i for i, (_, _, needs) in enumerate(self.patterns) if needs is None)

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def finditer(self, text: str, start: int, end: int) -> Iterator[tuple[re.Match[str], T]]:
        """Each pattern's matches in text[start:end], pattern by pattern, with its value."""
        tried = set(self._always)
        for place in self._places(text, start, end) if self._places is not None else ():
            tried |= self._let_through[place.group(1)]
        for i in sorted(tried):
            rx, value, _ = self.patterns[i]
            for match in rx.finditer(text, start, end):
                yield match, value
