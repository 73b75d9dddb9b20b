"""Text normalisation and word error rate, so that scores measure words, not spelling.

Whisper writes "09:15", "120" and "95%" where a medic says "zero nine fifteen",
"one twenty" and "ninety five percent"; tcccd writes "1 g TXA" for "one gram
of TXA". Scoring the raw strings would count those as errors and hide the
mistakes that matter (a wrong drug, a wrong time). Both sides are therefore
brought to one form: lower case, no punctuation, spoken numbers written as
digit strings, spelled letters joined, unit words and symbols alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_SMALL_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
                "fifteen sixteen seventeen eighteen nineteen")
_SMALL = {w: i for i, w in enumerate(_SMALL_WORDS.split(" "))}
_TENS_WORDS = "twenty thirty forty fifty sixty seventy eighty ninety"
_TENS = {w: 10 * i for i, w in enumerate(_TENS_WORDS.split(" "), start=2)}
_SCALES = {"hundred": 100, "thousand": 1000}
NUMBER_WORDS = set(_SMALL) | set(_TENS) | set(_SCALES)
_UNITS = {"grams": ("g", "gram"), "milligrams": ("mg", "milligram"), "micrograms": ("mcg", "microgram"),
          "milliliters": ("ml", "milliliter", "millilitre", "millilitres"), "kilograms": ("kg", "kilogram")}
_ABBREVIATIONS = {"%": " percent ", "bp": "blood pressure", "okay": "ok", "o2": "oxygen",
                  **{spelling: unit for unit, spellings in _UNITS.items() for spelling in spellings}}


def normalize(text: str) -> str:
    """One canonical form for scoring: 'Heart rate: 120.' and 'heart rate one twenty' both become 'heart rate 120'."""
    text = text.lower().replace("’", "'")
    text = re.sub(r"(?<=\d)/(?=\d)", " over ", text)
    text = re.sub(r"(?<=\d)[:.,](?=\d)", "", text)
    text = text.replace("%", " percent ")
    text = re.sub(r"(?<=\d)(?=[a-z])|(?<=[a-z])(?=\d)", " ", text)
    text = re.sub(r"[^a-z0-9' ]+", " ", text).replace("'", "")
    words = [_ABBREVIATIONS.get(w, w) for w in text.split()]
    words = _drop_dose_of(" ".join(words).split())
    return " ".join(_join_letters(_numbers_to_digits(words)))


def _drop_dose_of(words: list[str]) -> list[str]:
    """'one gram of TXA' and '1 g TXA' (tcccd's written dose) score alike: 'of' after a number and a unit goes."""
    return [w for i, w in enumerate(words) if not (
        w == "of" and i >= 2 and words[i - 1] in _UNITS and (words[i - 2].isdigit() or words[i - 2] in NUMBER_WORDS))]


def _numbers_to_digits(words: list[str]) -> list[str]:
    """Runs of number words become one digit string; adjacent groups concatenate as a medic reads a time."""
    out: list[str] = []
    run: list[str] = []
    for k, word in enumerate([*words, ""]):
        scale_and = word == "and" and run and run[-1] in _SCALES and k + 1 < len(words) \
            and words[k + 1] in NUMBER_WORDS and words[k + 1] not in _SCALES  # "one hundred and ten"
        if word in NUMBER_WORDS or scale_and or (word.isdigit() and run and run[-1].isdigit()):
            run.append(word)
            continue
        if run:
            out.append(digits_of(run))
            run = []
        if word:
            out.append(word)
    return out


def digits_of(run: list[str]) -> str:
    groups: list[int] = []
    current: int | None = None
    for word in run:
        if word == "and":  # only ever inside "hundred and ten" (the callers' rule): it adds nothing
            continue
        if word.isdigit():
            groups += [current] if current is not None else []
            groups.append(int(word))
            current = None
        elif word in _SCALES:
            current = (current or 1) * _SCALES[word]
        elif current is not None and _combines(current, _SMALL.get(word, _TENS.get(word, 0)), word):
            current += _SMALL.get(word, _TENS.get(word, 0))
        else:
            if current is not None:
                groups.append(current)
            current = _SMALL.get(word, _TENS.get(word))
    if current is not None:
        groups.append(current)
    return "".join(str(g) for g in groups)


def _combines(current: int, value: int, word: str) -> bool:
    """'twenty five' is one number, 'one twenty' two; 'one hundred twenty' and 'one hundred twenty one' are one."""
    below_hundred = current % 100
    if current >= 100 and below_hundred == 0:
        return value < 100
    return below_hundred >= 20 and below_hundred % 10 == 0 and word in _SMALL and 0 < value < 10


def _join_letters(words: list[str]) -> list[str]:
    """'t x a' and 'txa' score alike: spelled-out letters join into one word."""
    out: list[str] = []
    letters: list[str] = []
    for word in [*words, ""]:
        if len(word) == 1 and word.isalpha() and (letters or word not in ("a", "i")):
            letters.append(word)
            continue
        if letters:
            out.append("".join(letters))
            letters = []
        if word:
            out.append(word)
    return out


def edit_distance(reference: Sequence[str], hypothesis: Sequence[str]) -> int:
    """Word-level Levenshtein distance (substitutions, deletions, insertions)."""
    previous = list(range(len(hypothesis) + 1))
    for i, ref_word in enumerate(reference, start=1):
        current = [i]
        for j, hyp_word in enumerate(hypothesis, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ref_word != hyp_word)))
        previous = current
    return previous[-1]


@dataclass(frozen=True)
class WerScore:
    errors: int
    reference_words: int

    @property
    def wer(self) -> float:
        return self.errors / max(1, self.reference_words)


def word_errors(reference: str, hypothesis: str) -> WerScore:
    ref, hyp = normalize(reference).split(), normalize(hypothesis).split()
    return WerScore(edit_distance(ref, hyp), len(ref))


def invented_terms(reference: str, hypothesis: str, terms: Iterable[str]) -> list[str]:
    """Lexicon terms the hypothesis holds more often than the reference (plurals folded): clinical words nobody
    said. Both sides are normalised as for WER ('FAST1' and 'fast one' alike), so a term heard as said is never
    counted, however it was spelled."""
    ref, hyp = _folded(normalize(reference)), _folded(normalize(hypothesis))
    invented = []
    for term in dict.fromkeys(terms):
        words = _folded(normalize(term))
        if words:
            invented += [term] * max(0, _count(hyp, words) - _count(ref, words))
    return invented


def _folded(text: str) -> list[str]:
    """Words with a plural 's' dropped ('arms' and 'arm', 'litters' and 'litter' count alike)."""
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in text.split()]


def _count(words: list[str], term: list[str]) -> int:
    """Non-overlapping occurrences of the word sequence `term` in `words`."""
    count, i = 0, 0
    while i + len(term) <= len(words):
        if words[i:i + len(term)] == term:
            count, i = count + 1, i + len(term)
        else:
            i += 1
    return count


def corpus_wer(pairs: Iterable[tuple[str, str]]) -> float:
    """Errors over all reference words (not a mean of per-sentence rates, which overweights short ones)."""
    scores = [word_errors(ref, hyp) for ref, hyp in pairs]
    return sum(s.errors for s in scores) / max(1, sum(s.reference_words for s in scores))
