"""Many phrases found in one pass over a sentence's words: an index by first word, not one big pattern.

The assertion rules hold several hundred trigger phrases; a regular expression
alternation of them tries each at every character. Here the sentence is cut
into words once (contractions split as they are said: "couldn't" is "couldn" +
"'t", "he'll" is "he" + "'ll"; either apostrophe, or none: "couldnt" is "couldn" + "'t" too, as a typed or
lower-case transcript writes it), and at each word only the
phrases that start with it are compared: one pass, linear in the sentence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Generic, NamedTuple, TypeVar

T = TypeVar("T")
_WORD = re.compile(r"[a-z0-9]+(?:[-/][a-z0-9]+)*|['’][a-z]+")
_NO_APOSTROPHE = frozenset({"didnt", "dont", "doesnt", "wasnt", "werent", "isnt", "arent", "hasnt", "havent",
                            "hadnt", "couldnt", "wouldnt", "shouldnt", "cant", "wont", "aint"})


class Word(NamedTuple):
    """One word said and its characters [start, end) in the transcript's text."""

    text: str
    start: int
    end: int


def words(lower: str, start: int, end: int) -> list[Word]:
    """The words of lower[start:end], apostrophes written straight; a negated verb written without one split as
    said ("didnt" -> "didn" + "'t")."""
    out = []
    for m in _WORD.finditer(lower, start, end):
        said = m.group().replace("’", "'")
        if said in _NO_APOSTROPHE:
            out += [Word(said[:-1], m.start(), m.end() - 1), Word("'t", m.end() - 1, m.end())]
        else:
            out.append(Word(said, m.start(), m.end()))
    return out


def phrase_words(phrase: str) -> tuple[str, ...]:
    return tuple(w.text for w in words(phrase.lower(), 0, len(phrase)))


class PhraseIndex(Generic[T]):
    """Phrases with a value each; `find` gives every phrase said, with its characters and value."""

    def __init__(self, phrases: list[tuple[str, T]]) -> None:
        self._by_first: dict[str, list[tuple[tuple[str, ...], T]]] = {}
        for phrase, value in phrases:
            said = phrase_words(phrase)
            if said:
                self._by_first.setdefault(said[0], []).append((said, value))

    def __bool__(self) -> bool:
        return bool(self._by_first)

    def find(self, lower: str, said: list[Word]) -> Iterator[tuple[int, int, T]]:
        """Each phrase said, its words apart by spaces only (a comma between ends a phrase)."""
        texts = [w.text for w in said]
        last = len(texts) - 1
        by_first = self._by_first
        for i in [i for i, text in enumerate(texts) if text in by_first]:  # most words start no phrase
            following = texts[i + 1] if i < last else None  # most phrases differ from what is said by their 2nd word
            for phrase, value in by_first[texts[i]]:
                end = i + len(phrase)
                if end == i + 1 or phrase[1] == following and tuple(texts[i:end]) == phrase and all(
                        not lower[said[k - 1].end:said[k].start].strip() for k in range(i + 1, end)):
                    yield said[i].start, said[end - 1].end, value
