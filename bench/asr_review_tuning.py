"""Choose the audio check's margins and the uncertainty threshold on the tune set only (review.ReviewSettings).

The whisper stage runs in-process on tests/data/asr/tune.txt, spoken by
espeak-ng (4 voices, bench/asr_corpus.build_split) and by the kit's Piper voice
at three rates (build_piper_split), plus tune.txt's sentences read one after
another (build_long). Every margin is set so that the audio check rejects
everything: each proposal then lands in `considered[]` with both scores, and
is labelled against the reference: `right` when applying it alone lowers the
clip's word errors without adding a lexicon term, `wrong` when it adds a term
or errors, `neutral` otherwise. For each margin the tables show what would be
accepted; the chosen margin is the largest that accepts no wrong proposal
(the bias margin: the smallest that keeps every term the bias chose right).
Words are labelled wrong or right against the reference (asr_review_metrics),
and the threshold is the highest that flags at most 5% of the right words.
Every number with a sound-alike twin (number_twins.py) is listed with both
scores; the twin margin keeps SAFETY_GAP_LOGPROB past the best-separated
confusion (a number whose twin was what was said).
Coverage: how many stretches of VAD speech each setting would call uncovered
(all tune speech is transcribed, so every one is a false alarm).

    .venv/bin/python bench/asr_review_tuning.py
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import asr_corpus  # noqa: E402
from asr_review_metrics import wrong_words  # noqa: E402

from tcccd.kit.audio import load_mono  # noqa: E402
from tcccd.kit.testing import PluginHarness  # noqa: E402
from tcccd.plugins.whisper.review.coverage import covered_by, uncovered  # noqa: E402
from tcccd.plugins.whisper.review.textnorm import invented_terms, word_errors  # noqa: E402
from tcccd.plugins.whisper.review.vocabulary import default_vocabulary_path, read_vocabulary  # noqa: E402
from tcccd.plugins.whisper.stage.vad import SpeechDetector, VadSettings  # noqa: E402
from tcccd.wire.protocol import AudioFormat, Message  # noqa: E402

OUT = asr_corpus.ROOT / "bench" / "out" / "asr"
SAFETY_GAP_LOGPROB = 3.0  # nats kept between the margin and the best-scored wrong proposal on tune
REJECT_ALL = {"term_margin_logprob": -100.0, "number_margin_logprob": -100.0, "bias_margin_logprob": 100.0}
DOUBT_EVERY_TWIN = {"twin_margin_logprob": 100.0}  # the shipped rewrites, every number with a twin listed


def tune_clips() -> list[asr_corpus.Clip]:
    return (asr_corpus.build_split("tune", OUT) + asr_corpus.build_piper_split("tune", OUT)
            + [asr_corpus.build_long(OUT, split="tune")])


def label(reference: str, heard: str, changed: str, terms: list[str]) -> str:
    errors = word_errors(reference, changed).errors - word_errors(reference, heard).errors
    invented = len(invented_terms(reference, changed, terms)) - len(invented_terms(reference, heard, terms))
    if invented > 0 or errors > 0:
        return "wrong"
    return "right" if errors < 0 else "neutral"


def tune_replies(params: dict) -> Iterator[tuple[asr_corpus.Clip, bytes, list[dict]]]:
    """Each tune clip, its WAV bytes and the whisper stage's segments for it, with `params` (beam 5)."""
    with PluginHarness("whisper", {"beam_size": 5, **params}, Path(tempfile.mkdtemp())) as harness:
        for clip in tune_clips():
            payload = clip.path.read_bytes()
            [reply] = harness.request(Message("transcribe", payload=payload, final=True, audio=AudioFormat("wav")))
            yield clip, payload, reply.data["segments"]


def collect(min_similarity: float) -> tuple[list[dict], list[tuple[float, bool]], list[tuple[list, list]]]:
    terms = read_vocabulary(default_vocabulary_path())
    detector = SpeechDetector.load(VadSettings())
    proposals, words, coverage = [], [], []
    for clip, payload, segments in tune_replies({"vocabulary_min_similarity": min_similarity, **REJECT_ALL}):
        heards = [s["heard"] for s in segments]
        for k, segment in enumerate(segments):
            for entry in segment["considered"]:
                source = segment["heard"]
                changed = source[:entry["start_char"]] + entry["proposed"] + source[entry["end_char"]:]
                clip_changed = " ".join(heards[:k] + [changed] + heards[k + 1:])
                proposals.append({**entry, "label": label(clip.reference, " ".join(heards), clip_changed, terms),
                                  "delta": entry["audio_logprob_proposed"] - entry["audio_logprob_heard"]})
        record_words = [w for s in segments for w in s["words"]]
        flags = wrong_words(clip.reference, [w["text"] for w in record_words])
        words += [(w["probability"], bad) for w, bad in zip(record_words, flags, strict=True)]
        audio = load_mono(payload, AudioFormat("wav"), 16000, max_s=600)
        coverage.append(([(s.start_s, s.end_s) for s in detector.speech_spans(audio)], segments))
    return proposals, words, coverage


def collect_twins() -> list[tuple[float, str]]:
    """A second pass with the shipped rewrites (the numbers as the record writes them), every twin listed."""
    terms = read_vocabulary(default_vocabulary_path())
    return [gap for clip, _, segments in tune_replies(DOUBT_EVERY_TWIN)
            for gap in twin_gaps(clip.reference, segments, terms)]


def twin_gaps(reference: str, segments: list[dict], terms: list[str]) -> list[tuple[float, str]]:
    """(heard score - twin score, label) for each number of the reply that has a twin: `right` when writing the
    twin instead would lower the clip's word errors (a sound-alike confusion the doubt should catch), `wrong` when
    it would add errors (the number was heard right), `neutral` otherwise."""
    texts = [s["text"] for s in segments]
    out = []
    for k, segment in enumerate(segments):
        for u in segment["uncertain"]:
            if u.get("twin"):
                text = segment["text"]
                changed = texts[:k] + [text[:u["start_char"]] + u["twin"] + text[u["end_char"]:]] + texts[k + 1:]
                out.append((u["audio_logprob_heard"] - u["audio_logprob_twin"],
                            label(reference, " ".join(texts), " ".join(changed), terms)))
    return out


def twin_table(twins: list[tuple[float, str]]) -> float:
    """Prints what each margin would doubt; returns the chosen one: SAFETY_GAP_LOGPROB past the widest-separated
    confusion on tune (the twin was what was said)."""
    print(f"\nnumbers with a twin: {len(twins)}; doubted when heard - twin <= margin; a `right` twin is a confusion")
    print(f"{'margin':>8} {'right':>6} {'neutral':>8} {'wrong':>6}")
    for margin in np.arange(0, 10.5, 1.0):
        got = defaultdict(int)
        for gap, kind in twins:
            got[kind] += gap <= margin
        print(f"{margin:>8.1f} {got['right']:>6} {got['neutral']:>8} {got['wrong']:>6}")
    for gap, kind in sorted(twins):
        print(f"   {gap:7.2f} {kind}")
    return max([gap for gap, kind in twins if kind == "right"], default=0.0) + SAFETY_GAP_LOGPROB


def margin_table(rows: list[dict], kind: str, accept_if: str) -> None:
    chosen = [r for r in rows if r["kind"] == kind]
    counts = defaultdict(int)
    for r in chosen:
        counts[r["label"]] += 1
    print(f"\n{kind}: {len(chosen)} proposals ({dict(counts)}); accepted when {accept_if}")
    print(f"{'margin':>8} {'right':>6} {'neutral':>8} {'wrong':>6}")
    for margin in np.arange(-4, 16.5, 0.5):
        if kind == "unbiased":
            accepted = [r for r in chosen if r["delta"] >= margin]
        else:
            accepted = [r for r in chosen if r["delta"] >= -margin]
        got = defaultdict(int)
        for r in accepted:
            got[r["label"]] += 1
        print(f"{margin:>8.1f} {got['right']:>6} {got['neutral']:>8} {got['wrong']:>6}")
    for r in sorted(chosen, key=lambda r: -r["delta"]):
        print(f"   {r['delta']:7.2f} {r['label']:<8} {r['heard']!r} -> {r['proposed']!r}")


def chosen_margin(rows: list[dict], kind: str) -> float:
    """vocabulary/number: SAFETY_GAP_LOGPROB short of the best-scored wrong proposal, or, with none wrong, just
    past the worst-scored right or neutral one; unbiased: just past the best-scored unbiased reading that would
    have replaced a right term."""
    chosen = [r for r in rows if r["kind"] == kind]
    wrong = [-r["delta"] for r in chosen if r["label"] == "wrong"]
    if kind == "unbiased":
        return max([r["delta"] for r in chosen if r["label"] != "right"], default=0.0) + 0.5
    if wrong:
        return min(wrong) - SAFETY_GAP_LOGPROB
    return max([-r["delta"] for r in chosen], default=0.0) + 0.5


def threshold_table(words: list[tuple[float, bool]]) -> None:
    right = [p for p, bad in words if not bad]
    wrong = [p for p, bad in words if bad]
    print(f"\nwords: {len(right)} right, {len(wrong)} wrong")
    print(f"{'below':>6} {'right flagged %':>16} {'wrong flagged %':>16}")
    for t in np.arange(0.05, 0.96, 0.05):
        flagged = [100 * np.mean([p < t for p in group]) for group in (right, wrong)]
        print(f"{t:>6.2f} {flagged[0]:>16.1f} {flagged[1]:>16.1f}")


def coverage_table(coverage: list[tuple[list, list]]) -> None:
    print("\ncoverage false alarms on tune (speech all transcribed): word margin s x min uncovered s")
    for margin in (0.1, 0.2, 0.3, 0.4):
        cells = []
        for min_s in (0.3, 0.5, 0.7, 1.0):
            gaps = sum(len(uncovered(speech, covered_by(segments, [], margin), min_s)) for speech, segments in coverage)
            cells.append(f"{min_s}: {gaps}")
        print(f"  margin {margin}: " + ", ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-similarity", type=float, default=0.75, help="the corrector's proposal threshold")
    args = parser.parse_args()
    proposals, words, coverage = collect(args.min_similarity)
    print("set: tune.txt only (espeak-ng 4 voices, Piper joe at 3 rates, the tune sentences read as one recording)")
    margin_table(proposals, "vocabulary", "term score >= heard - margin")
    margin_table(proposals, "number", "reading score >= heard - margin")
    margin_table(proposals, "unbiased", "unbiased reading score >= biased + margin (else the term stays)")
    threshold_table(words)
    coverage_table(coverage)
    twin_margin = twin_table(collect_twins())
    right = [p for p, bad in words if not bad]
    threshold = max(t for t in np.arange(0.05, 0.96, 0.05) if np.mean([p < t for p in right]) <= 0.05)
    print("\nchosen (review.ReviewSettings): " + ", ".join(
        f"{kind} margin {chosen_margin(proposals, kind):.2f}" for kind in ("vocabulary", "number", "unbiased"))
        + f", uncertain_below {threshold:.2f}, twin margin {twin_margin:.2f}")


if __name__ == "__main__":
    main()
