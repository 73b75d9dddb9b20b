"""The numbers a run of words says, so that a rewrite can be held to saying the same ones.

"nine line" and "9-line" say one number, nine; "nine five" says ninety-five
(or nine and five) and "9-line" only nine; "first one" says an ordinal and a
one, "FAST1" only the one. textnorm's scoring form reads the cardinals (number
words and digits, a run of them as one digit string the way a medic reads a
time: "zero nine five two" -> 0952); this module adds what a medic also says as
a number: ordinals ("first", "second intercostal space"), plurals of number
words ("rule of nines", "tens"), and "oh" for zero where it stands beside
another number ("zero nine oh five", "oh two hundred").
"""

from __future__ import annotations

import functools

from tcccd.plugins.whisper.review.textnorm import NUMBER_WORDS, normalize

_ORDINAL_WORDS = ("first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
                  "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth thirtieth fortieth "
                  "fiftieth sixtieth seventieth eightieth ninetieth hundredth thousandth")
ORDINALS = frozenset(_ORDINAL_WORDS.split(" "))
ZERO_LETTER = frozenset({"oh", "o"})  # zero as said in a time ("oh nine hundred"), only beside another number


def plural_number(word: str) -> str | None:
    """The number word of a plural ('nines' -> 'nine', 'twenties' -> 'twenty'), or None."""
    for cut, add in (("ies", "y"), ("es", ""), ("s", "")):
        if word.endswith(cut) and word[: -len(cut)] + add in NUMBER_WORDS:
            return word[: -len(cut)] + add
    return None


def is_number_word(word: str) -> bool:
    """A word that is a number by itself: a cardinal, an ordinal, a plural of one, or digits."""
    plain = word.lower().strip("'")
    return plain in NUMBER_WORDS or plain in ORDINALS or plural_number(plain) is not None \
        or any(ch.isdigit() for ch in plain)


def spoken_zeros(words: list[str]) -> set[int]:
    """Positions of an "oh" that says zero: one beside a number word ("zero nine oh five", "oh two hundred")."""
    return {i for i, w in enumerate(words) if w.lower() in ZERO_LETTER
            and any(0 <= j < len(words) and is_number_word(words[j]) for j in (i - 1, i + 1))}


def numbers_said(words: list[str], zeros: set[int] | None = None) -> tuple[str, ...]:
    """The numbers of `words` in order: digit strings for cardinals (adjacent ones joined, as textnorm scores
    them), the ordinal word for ordinals. `zeros`: positions of an "oh" that says zero (spoken_zeros)."""
    spoken = ["zero" if i in (zeros or set()) else (plural_number(w.lower()) or w) for i, w in enumerate(words)]
    return tuple(tok for tok in normalize(" ".join(spoken)).split() if tok.isdigit() or tok in ORDINALS)


class SpokenNumbers:
    """Where the words of one transcript say numbers, and which numbers each run of them says."""

    def __init__(self, words: list[str]) -> None:
        self.words = words
        self.zeros = spoken_zeros(words)
        self.positions = {i for i, w in enumerate(words) if is_number_word(w)} | self.zeros
        self.of_run = functools.lru_cache(maxsize=None)(self._of_run)

    def in_run(self, start: int, end: int) -> bool:
        """Whether words[start:end] says any number."""
        return not self.positions.isdisjoint(range(start, end))

    def _of_run(self, start: int, end: int) -> tuple[str, ...]:
        return numbers_said(self.words[start:end], {i - start for i in self.zeros if start <= i < end})
