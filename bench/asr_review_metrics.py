"""What the ASR benchmark and the review tuning count beyond WER, from the stage's replies and the references.

- wrong_words: which of a reply's `words[]` are wrong, by aligning their normalised text to the normalised
  reference (textnorm.normalize, the WER form): a word is wrong when any of its normalised pieces is not
  matched word for word (substituted or inserted).
- number_errors: numbers written wrong: digit strings of the record that the reference does not hold, plus
  those of the reference the record lacks (a split "0 9 15" for 0915 counts both ways).
- rewrite_counts: corrections proposed, accepted and rejected by the audio check, per kind.
- medic_counts: what a medic reads in one reply: invented clinical terms, numbers wrong, numbers in a form
  nobody says left unmarked, rewrites, words marked uncertain and whether they were wrong.
- lost_phrases: the phrases of a long recording that the record lost without reporting them.
"""

from __future__ import annotations

import re
from collections import Counter

from tcccd.plugins.whisper.review.textnorm import invented_terms, normalize

_DIGITS = re.compile(r"\d+")


def aligned_matches(reference: list[str], hypothesis: list[str]) -> list[bool]:
    """For each hypothesis word, whether a least-edit alignment to the reference matches it exactly."""
    n, m = len(reference), len(hypothesis)
    cost = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        cost[i][0] = i
    for j in range(m + 1):
        cost[0][j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            same = reference[i - 1] == hypothesis[j - 1]
            cost[i][j] = min(cost[i - 1][j] + 1, cost[i][j - 1] + 1, cost[i - 1][j - 1] + (not same))
    matched = [False] * m
    i, j = n, m
    while i > 0 and j > 0:
        same = reference[i - 1] == hypothesis[j - 1]
        if cost[i][j] == cost[i - 1][j - 1] + (not same):
            matched[j - 1] = same
            i, j = i - 1, j - 1
        elif cost[i][j] == cost[i][j - 1] + 1:
            j -= 1
        else:
            i -= 1
    return matched


def wrong_words(reference: str, words: list[str]) -> list[bool]:
    """One flag per word of the record: True when it is not what the reference says there."""
    pieces, owners = [], []
    for k, word in enumerate(words):
        for piece in normalize(word).split():
            pieces.append(piece)
            owners.append(k)
    matched = aligned_matches(normalize(reference).split(), pieces)
    wrong = [False] * len(words)
    for owner, ok in zip(owners, matched, strict=True):
        wrong[owner] = wrong[owner] or not ok
    return wrong


def number_errors(reference: str, text: str) -> int:
    """Digit strings in the record and the reference that do not pair up (as multisets)."""
    said, written = Counter(_DIGITS.findall(normalize(reference))), Counter(_DIGITS.findall(normalize(text)))
    return sum(((said - written) + (written - said)).values())


def rewrite_counts(segments: list[dict]) -> Counter:
    """proposed / accepted / rejected rewrites across segments, per kind (vocabulary, number, unbiased)."""
    counts: Counter = Counter()
    for segment in segments:
        for correction in segment.get("corrections", []):
            kind = "unbiased" if correction.get("source") == "unbiased decoder" else "vocabulary"
            counts[f"{kind} accepted"] += 1
        for number in segment.get("numbers", []):
            if number.get("reading", number["heard"]) != number["heard"]:
                counts["number accepted"] += 1
        for entry in segment.get("considered", []):
            counts[f"{entry['kind']} rejected"] += 1
    return counts


def medic_counts(reference: str, reply: dict, terms: list[str]) -> Counter:
    """Counts over one reply ({text, segments}): `invented` clinical terms, `numbers_wrong`, rewrites by kind,
    `words`, `wrong` words, `uncertain` words and how many of those were `wrong_uncertain`, and the same for the
    words holding a digit (`number_words`, `number_wrong`, `number_wrong_uncertain`, `number_uncertain`): a
    wrong number left unmarked is one the card shows as confirmed (segments without words[] count only the first
    two)."""
    counts = Counter(invented=len(invented_terms(reference, reply["text"], terms)),
                     numbers_wrong=number_errors(reference, reply["text"]))
    segments = reply.get("segments", [])
    counts.update(broken_unmarked=broken_unmarked(segments))
    counts.update(rewrite_counts(segments))
    words = [(k, w["start_char"], w["end_char"], w["text"]) for k, s in enumerate(segments)
             for w in s.get("words", [])]
    if words:
        wrong = wrong_words(reference, [text for *_, text in words])
        doubts = {(k, u["start_char"], u["end_char"]) for k, s in enumerate(segments) for u in s.get("uncertain", [])}
        marked = [(k, a, b) in doubts for k, a, b, _ in words]
        counts.update(words=len(words), wrong=sum(wrong), uncertain=sum(marked),
                      wrong_uncertain=sum(w and m for w, m in zip(wrong, marked, strict=True)))
        digits = [_DIGITS.search(text) is not None for *_, text in words]
        counts.update(number_words=sum(digits), number_wrong=sum(d and w for d, w in zip(digits, wrong, strict=True)),
                      number_uncertain=sum(d and m for d, m in zip(digits, marked, strict=True)),
                      number_wrong_uncertain=sum(d and w and m for d, w, m in zip(digits, wrong, marked, strict=True)))
    return counts


def lost_phrases(phrases: tuple[tuple[str, float, float], ...], reply: dict, min_recall: float = 0.7) -> list[str]:
    """Phrases whose words the segments overlapping them hold less than `min_recall` of, with no dropped speech
    reported over them: speech lost silently, or heard so badly that a reader cannot tell (misheard words count
    as missing: look at the transcript before calling it a loss)."""
    lost = []
    for text, start_s, end_s in phrases:
        said = " ".join(s["text"] for s in reply.get("segments", []) if s["end_s"] > start_s and s["start_s"] < end_s)
        wanted, got = normalize(text).split(), set(normalize(said).split())
        reported = any(d["end_s"] > start_s and d["start_s"] < end_s for d in reply.get("dropped", []))
        if wanted and sum(w in got for w in wanted) / len(wanted) < min_recall and not reported:
            lost.append(text)
    return lost


def broken_unmarked(segments: list[dict]) -> int:
    """Numbers in a form nobody says where a time or quantity is expected (number_forms.broken_numbers) that no
    `uncertain` entry covers: what the card would show as confirmed."""
    from tcccd.plugins.whisper.review.number_forms import broken_numbers

    count = 0
    for segment in segments:
        doubts = [(u["start_char"], u["end_char"]) for u in segment.get("uncertain", [])]
        for match, _ in broken_numbers(segment.get("text", "")):
            count += not any(a < match.end() and match.start() < b for a, b in doubts)
    return count
