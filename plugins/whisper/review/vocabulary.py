"""Domain vocabulary by lexicon-constrained correction: rewrite what sounds like a known term.

tiny.en hears "tourniquet" as "turn the kit" and "tranexamic acid" as
"drink Sammy Cassid": the sounds are right, the spelling is a common phrase.
A prompt full of medical words made things worse and made the model write
those words over silence. This method never touches the decoder: it compares
the *pronunciation* (espeak-ng phonemes, through piper's bundled phonemizer)
of runs of 1-5 transcript words with each vocabulary term and replaces a run
only when the two sound nearly alike. It can only rewrite words that were
heard, so an empty transcript (silence, noise) stays empty by construction.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from tcccd.plugins.whisper.review.said_numbers import SpokenNumbers, numbers_said

MAX_RUN_WORDS = 5
MIN_FUZZY_PHONEMES = 6
REST_MIN_SIMILARITY = 0.5  # a run's words beside one it shares with the term: "claws" -> "gauze" 0.75, "NASA fire
# and deal" -> "nasopharyngeal" 0.73, "is" -> "seal" 0.33, "me a" -> "CAT" 0.0
# Words that say a thing is not there, not now or still to come: a rewrite never takes one away.
NOT_NOW = frozenset({"no", "not", "nor", "never", "none", "nothing", "neither", "without", "cannot", "nil", "old",
                     "prior", "previous", "history", "will", "shall", "gonna"})
# Words for a person as the object of an act: a run holding one is never rewritten (VocabularyCorrector.
# _about_a_person). Not "he", "we": tiny.en writes "He mostatic" for "hemostatic".
PERSONS = frozenset({"him", "her", "them", "us", "me"})
# Sides: no term says one, so a run holding one is never rewritten (VocabularyCorrector._names_a_side): the side
# of a wound or a tourniquet is a fact the card reads, and "calcium right" sounds near "calcium chloride".
SIDES = frozenset({"left", "right"})
_DROP = str.maketrans("", "", "ˈˌːʲ' -")
_FOLD = str.maketrans({"ɾ": "t", "ᵻ": "ɪ", "ɐ": "ə", "ɚ": "ɹ", "ɝ": "ɹ", "ɜ": "ə", "i": "ɪ", "ʊ": "u", "ɑ": "a",
                       "ɔ": "o", "ɡ": "k", "d": "t", "z": "s", "v": "f", "b": "p", "ð": "θ"})
_WORD = re.compile(r"\d+(?:[.:,/]\d+)*\w*|[\w']+")
_BREAK = re.compile(r"[,.;:!?]")  # a mark between two words: they belong to two phrases


@dataclass(frozen=True)
class Correction:
    start_word: int
    end_word: int
    term: str
    similarity: float


@dataclass(frozen=True)
class AppliedCorrection:
    """One rewrite, for the audit trail: `heard` at characters [start_char, end_char) of the heard text."""

    heard: str
    term: str
    start_char: int
    end_char: int
    similarity: float


def default_vocabulary_path() -> Path:
    return Path(str(resources.files("tcccd.profiles").joinpath("medical_vocab.txt")))


def read_vocabulary(path: Path) -> list[str]:
    """Terms, one per line; '#' starts a comment. A missing or empty file is an error, not a silent no-op."""
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as exc:
        raise ValueError(f"vocabulary {path}: cannot read it ({exc.strerror}); expected a text file, one term "
                         f"per line") from None
    terms = [line.split("#", 1)[0].strip() for line in lines]
    terms = [t for t in terms if t]
    if not terms:
        raise ValueError(f"vocabulary {path}: holds no terms; expected one term per line")
    return terms


class Phonemizer:
    """Word -> folded phoneme string, cached: a transcript's words repeat and espeak costs ~3 ms a call."""

    def __init__(self) -> None:
        from piper.phonemize_espeak import EspeakPhonemizer

        self._espeak: Any = EspeakPhonemizer()
        self.sounds = functools.lru_cache(maxsize=4096)(self._sounds)

    def _sounds(self, text: str) -> str:
        phonemes = "".join("".join(sentence) for sentence in self._espeak.phonemize("en-us", text))
        return phonemes.translate(_DROP).translate(_FOLD)


class VocabularyCorrector:
    """Rewrites runs of heard words that sound like a lexicon term.

    `common_word` (word -> bool), where given, names the words a speaker may well have said as heard: one such
    word alone is never rewritten into a one-word term. Sound alone cannot tell "thy" from "thigh" or "liter"
    from "litter", and turning a word the model heard right into an anatomy or drug word invents clinical
    content; a misheard word the model has to spell from pieces ("Medimac") or a run of words ("turn the kit")
    is still corrected. The stage passes "a single token of Whisper's own vocabulary".

    Numbers: a run of words is rewritten only into a term that says the same numbers (said_numbers.py: number
    words, ordinals, plurals of number words, "oh" beside a number), in the same order. "nine line" -> "9-line"
    keeps its nine; "nine five" -> "9-line" would lose the five, "IV at ten" -> "IV access" the ten, "first one"
    -> "FAST1" the "first": refused. A time or a dose turned into a term is a number nobody can see was said. The
    other way too: a term that says a number is never made of a run that says none ("in line" -> "9-line").
    No exception for a term that hides a number word's sound: "hex ten" stays, not "Hextend" (tiny.en was not seen
    writing "hex ten" for it: bench/asr_hextend.py).
    """

    def __init__(self, terms: list[str], phonemizer: Phonemizer, min_similarity: float = 0.75,
                 common_word: Callable[[str], bool] | None = None) -> None:
        self.terms = terms
        self.min_similarity = min_similarity
        self.common_word = common_word
        self._phonemizer = phonemizer
        self._term_sounds = {term: phonemizer.sounds(term) for term in terms}
        self._known = {_plain(term) for term in terms}
        self._term_numbers = {term: numbers_said(term.split()) for term in terms}

    @classmethod
    def load(cls, path: Path | None, min_similarity: float = 0.75,
             common_word: Callable[[str], bool] | None = None) -> VocabularyCorrector:
        return cls(read_vocabulary(path or default_vocabulary_path()), Phonemizer(), min_similarity, common_word)

    def correct(self, text: str) -> str:
        """`text` with every run of words that sounds like a term replaced by that term; the rest kept as is."""
        return self.apply(text)[0]

    def apply(self, text: str) -> tuple[str, list[AppliedCorrection]]:
        """The corrected text and, for the audit trail, each rewrite: what was heard, where, what it became."""
        matches = [m for m in _WORD.finditer(text) if m.group()[0].isalnum()]
        words = [m.group() for m in matches]
        breaks = {i for i in range(1, len(matches)) if _BREAK.search(text, matches[i - 1].end(), matches[i].start())}
        applied = []
        for fix in sorted(self.find(words, breaks), key=lambda c: -c.start_word):
            begin, end = matches[fix.start_word].start(), matches[fix.end_word - 1].end()
            sentence_start = not text[:begin].strip() or text[:begin].rstrip()[-1] in ".!?"
            term = fix.term[:1].upper() + fix.term[1:] if sentence_start else fix.term
            applied.append(AppliedCorrection(text[begin:end], term, begin, end, round(fix.similarity, 3)))
            text = text[:begin] + term + text[end:]
        return text, applied[::-1]

    def find(self, words: list[str], breaks: set[int] | None = None) -> list[Correction]:
        """Best non-overlapping corrections, most similar first; none of a number word across a punctuation mark
        (`breaks`: the word positions a mark comes before): "eighty nine, I mean ninety eight" is a reading and its
        correction, never "9-line". A term of several words may be split by a mark ("drink, Sami Casid"); a
        one-word term never is: a mark is a pause, and nobody pauses inside one word ("the tibia, I think" is
        not "the TBI think")."""
        scores = self._similarities(words)
        cut, spoken = breaks or set(), SpokenNumbers(words)
        candidates = [
            Correction(start, end, term, sim) for (start, end, term), sim in scores.items()
            if sim >= self._needed(term) and self._keeps_numbers(spoken, start, end, term, cut)
            and self._keeps_phrases(start, end, term, cut)
            and _plain(" ".join(words[start:end])) not in _said_as(term)
            and sim > scores.get((start + 1, end, term), -1.0) and sim > scores.get((start, end - 1, term), -1.0)
            and not self._heard_as_said(words[start:end], term) and not _changes_form(words[end - 1], term)
            and self._rest_sounds_alike(words[start:end], term)
            and not any(_not_now(w) for w in words[start:end]) and not self._about_a_person(words[start:end])
            and not self._names_a_side(words[start:end])
            and not _across_clitic(words[start:end], term)
        ]
        chosen: list[Correction] = []
        taken = self._already_terms(words)  # a term heard right is never rewritten into another
        for cand in sorted(candidates, key=lambda c: (-c.similarity, c.end_word - c.start_word)):
            span = set(range(cand.start_word, cand.end_word))
            if not span & taken:
                chosen.append(cand)
                taken |= span
        return chosen

    def _keeps_numbers(self, spoken: SpokenNumbers, start: int, end: int, term: str, breaks: set[int]) -> bool:
        """Whether rewriting words[start:end] into `term` keeps the numbers said: no number across a punctuation
        mark (`breaks`), and the term says the same numbers as the run (see the class)."""
        if spoken.in_run(start, end) and not breaks.isdisjoint(range(start + 1, end)):
            return False
        return spoken.of_run(start, end) == self._term_numbers[term]

    @staticmethod
    def _keeps_phrases(start: int, end: int, term: str, breaks: set[int]) -> bool:
        """A one-word term is never made of words a punctuation mark splits (see `find`)."""
        return " " in term.strip() or breaks.isdisjoint(range(start + 1, end))

    def _heard_as_said(self, run: list[str], term: str) -> bool:
        """One common word where the term is one word too: the speaker may have said just that (see the class)."""
        return self.common_word is not None and len(run) == 1 and " " not in term.strip() \
            and self.common_word(run[0].lower())

    def _rest_sounds_alike(self, run: list[str], term: str) -> bool:
        """Where the run and the term share their first or last word, whether the rest of the run sounds like the
        rest of the term on its own: the shared word carried "me a tourniquet" to "CAT tourniquet" and "chest
        is" to "chest seal", writing a word nobody said beside one that was heard right."""
        heard, said = list(run), term.split()
        if len(heard) < 2 or len(said) < 2:
            return True
        if _plain(heard[-1]) == _plain(said[-1]):
            heard, said = heard[:-1], said[:-1]
        elif _plain(heard[0]) == _plain(said[0]):
            heard, said = heard[1:], said[1:]
        else:
            return True
        return _alike(self._run_sounds(heard), self._phonemizer.sounds(" ".join(said))) >= REST_MIN_SIMILARITY

    @staticmethod
    def _about_a_person(run: list[str]) -> bool:
        """The run names a person ("get him in", "pick him up"): a clause about someone, never the sound of a drug
        or a device ("get him in" sounds like "ketamine"); where the audio said the term, it is missed, not invented."""
        return any(_plain(w) in PERSONS for w in run)

    @staticmethod
    def _names_a_side(run: list[str]) -> bool:
        """The run says a side ("calcium right after it"): rewriting it would take the side away (see SIDES)."""
        return any(_plain(w) in SIDES for w in run)

    def _already_terms(self, words: list[str]) -> set[int]:
        """Word positions inside a run of words that already spells a multi-word term ("hemostatic gauze" must not
        gain a "gauze"). A one-word term may still be part of a longer one: "deal airway" -> "nasopharyngeal airway"."""
        known: set[int] = set()
        for start in range(len(words)):
            for end in range(start + 2, min(len(words), start + MAX_RUN_WORDS) + 1):
                if _plain(" ".join(words[start:end])) in self._known:
                    known |= set(range(start, end))
        return known

    def _needed(self, term: str) -> float:
        """Short terms ("TXA", "litter") sound like common words: only an exact sound match counts."""
        return 1.0 if len(self._term_sounds[term]) < MIN_FUZZY_PHONEMES else self.min_similarity

    def _similarities(self, words: list[str]) -> dict[tuple[int, int, str], float]:
        """Sound similarity of every run of 1-5 words to every term of about the same length.

        A run that also covers a neighbouring word scores lower than the run
        without it, which `find` uses to keep "on" in "decompression on the".
        """
        scores = {}
        for start in range(len(words)):
            for end in range(start + 1, min(len(words), start + MAX_RUN_WORDS) + 1):
                run = words[start:end]
                if any(ch.isdigit() for w in run for ch in w):
                    break
                sounds = self._run_sounds(run)
                for term, term_sounds in self._term_sounds.items():
                    if 0.6 <= len(sounds) / max(1, len(term_sounds)) <= 1.6:
                        scores[(start, end, term)] = _alike(sounds, term_sounds)
        return scores

    def _run_sounds(self, run: list[str]) -> str:
        return "".join(self._phonemizer.sounds(w) for w in run)


def _alike(heard_sounds: str, term_sounds: str) -> float:
    """Sound similarity, 0-1: one minus the normalised edit distance of the folded phoneme strings."""
    from rapidfuzz.distance import Levenshtein

    return 1.0 - Levenshtein.normalized_distance(heard_sounds, term_sounds)


def _plain(text: str) -> str:
    return re.sub(r"[^a-z ]", "", text.lower()).strip()


def _not_now(word: str) -> bool:
    """A word that says something was not done, is not there, is past or is still to come ("no blood products"
    sounds like "whole blood products", "old fracture" like "open fracture", "I'll shield" like "eye shield"):
    rewriting it away would put on the card as done or present what the medic denied, dated or planned."""
    plain = word.lower().replace("’", "'")
    return plain in NOT_NOW or plain.endswith(("n't", "'ll"))


def _across_clitic(run: list[str], term: str) -> bool:
    """A word with "'s" before another word of the run: "pressure's dropping" is "pressure is dropping", a clause,
    never one term ("pressure dressing"); a term that holds an apostrophe itself ("Hartmann's solution") may."""
    return "'" not in term.replace("’", "'") and any(w.replace("’", "'").endswith("'s") for w in run[:-1])


def _said_as(term: str) -> set[str]:
    """The term as heard, or in the plural: 'respirations' is the term said, never rewritten into 'respiration'."""
    plain = _plain(term)
    return {plain, plain + "s", plain + "es"}


def _changes_form(last_heard: str, term: str) -> bool:
    """The run's last word and the term's are one word in two forms (hypothermic / hypothermia, packed / packing,
    casualty / casualties), or the heard word carries a past tense the term drops (requested -> request).

    A correction is for a word the model misheard, never for the form of one it heard: "patient is hypothermic"
    rewritten to "hypothermia" and "wound packed" to "wound packing" said what the medic did not (the invented
    terms bench/asr.py counts; found on medical_eval, so that set no longer measures this rule blind)."""
    heard, said = _plain(last_heard), _plain(term).split()[-1] if _plain(term) else ""
    if not heard or not said or heard == said:
        return False
    stem = len(os.path.commonprefix([heard, said]))
    if stem >= 4 and stem >= min(len(heard), len(said)) - 3:
        return True
    return heard.endswith("ed") and not said.endswith("ed")
