"""What the vocabulary step's rules (vocabulary.py) change on the ASR sets, with and without them on the same
decoder text and the same audio.

Rules (`--without`, any of them): `numbers` (a run becomes a term only if the term says the same numbers),
`marks` (a one-word term is never made of words a punctuation mark splits), `shared-word` (where the run and the
term share a first or last word, the rest must sound alike on its own), `persons` (no run holding "him", "her",
"them", "us", "me"), `sides` (no run holding "left" or "right").

The whisper stage runs in-process (beam 5, bias on: bench/asr.py's `tcccd` column) once per clip of every set of
bench/asr.py. For each segment the decoder writes, the review is decided twice on the same encoder output: with
the corrector as shipped and with the named rules off; every proposal of either is checked against the audio as
the stage does. The reply is the shipped one; the clip's text without the rules is the reply with each segment's
text replaced by the other decision. Per set: vocabulary proposals the rules refuse and how many of those the
audio would have kept, proposals only the rules let through (a run freed for another term), WER, numbers written
wrong (asr_review_metrics.number_errors) and invented clinical terms, without / with the rules. `tune` may shape
the rules; every other set is reporting only.

Measured, `--without numbers` (the commit that added the rule, 2-core machine, 4.6 min; WER exact), without ->
with the rule:
real (51 clips) 3.01 -> 3.01 %, numbers wrong 1 -> 1; medical_eval (30) 33.47 -> 33.47 %, 6 -> 6;
medical_eval_b (30) 28.29 -> 28.29 %, 6 -> 6; safety (120) 7.49 -> 7.49 %, 0 -> 0; heldout (20) 36.30 -> 36.30 %,
2 -> 2; long (45 s) 20.69 -> 20.69 %, 10 -> 10; long_real (72 s) 2.04 -> 2.04 %, 0 -> 0; tune (40, tuning)
28.85 -> 28.85 %, 9 -> 9. Invented terms unchanged (heldout 1, every other set 0). The rule refused 10
proposals, every one of which the audio had rejected: safety 9 ('first one' -> FAST1, 'in line' and 'fine
line' -> 9-line, 3 Piper rates each), tune 1 ('first one' -> FAST1). No proposal appeared that the rule let
through; every segment was replayed. On these sets the audio check already stopped what the rule stops.

Measured, `--without marks shared-word` (the commit that added those two rules, 4.7 min, load 0.5-2.9): WER,
numbers written wrong and invented terms identical with and without them on every set (real 3.01 %, medical_eval
33.47 %, medical_eval_b 28.29 %, safety 7.49 %, heldout 36.30 %, tune 28.85 %, 45 s 20.69 %, 72 s real 2.04 %);
they refused 2 proposals, both on safety ('chest in' -> 'chest seal' in "She carried the chest in both chairs
upstairs.", two Piper rates), both already rejected by the audio. In the card's text runs, where no audio checks
a rewrite, they stop "me a tourniquet" -> "CAT tourniquet", "chest is" -> "chest seal", "tibia, I" -> "TBI".

Measured, `--without sides` (the commit that added the rule, in one run beside a candidate rule refusing any run of
common words a punctuation mark splits, "check, still" -> "chest seal"): `sides` refused 0 proposals on every set;
WER, numbers written wrong and invented terms identical with and without it (real 3.01 %, medical_eval 33.47 %,
medical_eval_b 28.29 %, safety 7.49 %, heldout 36.30 %, tune 28.85 %, 45 s 21.84 %, 72 s real 2.04 %). In the card's
text runs it stops "calcium right after it" -> "calcium chloride". The candidate refused one proposal the audio had
kept ('pupil, equal, and reactive' -> 'Pupils equal and reactive', medical_eval 33.47 -> 33.88 %) and nothing
invented on any set: it was not kept.

    .venv/bin/python bench/asr_vocab_rules.py --without numbers marks shared-word [--sets tune real ...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import asr  # noqa: E402
from asr_review_metrics import number_errors  # noqa: E402

from tcccd.kit.testing import PluginHarness  # noqa: E402
from tcccd.plugins.whisper.review.review import Decided, SegmentReviewer  # noqa: E402
from tcccd.plugins.whisper.review.said_numbers import SpokenNumbers  # noqa: E402
from tcccd.plugins.whisper.review.textnorm import NUMBER_WORDS, corpus_wer, invented_terms  # noqa: E402
from tcccd.plugins.whisper.review.vocabulary import VocabularyCorrector, default_vocabulary_path, read_vocabulary  # noqa: E402
from tcccd.wire.protocol import AudioFormat, Message  # noqa: E402

SETS = (*asr.SPLITS, *asr.LONG_SPLITS)
RULES = ("numbers", "marks", "shared-word", "persons", "sides")


def without(rules: set[str]) -> type[VocabularyCorrector]:
    """The corrector with the named rules off."""

    class Without(VocabularyCorrector):
        def _keeps_numbers(self, spoken: SpokenNumbers, start: int, end: int, term: str, breaks: set[int]) -> bool:
            if "numbers" not in rules:
                return super()._keeps_numbers(spoken, start, end, term, breaks)
            return not (breaks.intersection(range(start + 1, end))
                        and any(w.lower() in NUMBER_WORDS for w in spoken.words[start:end]))

        @staticmethod
        def _keeps_phrases(start: int, end: int, term: str, breaks: set[int]) -> bool:
            return "marks" in rules or VocabularyCorrector._keeps_phrases(start, end, term, breaks)

        def _rest_sounds_alike(self, run: list[str], term: str) -> bool:
            return "shared-word" in rules or super()._rest_sounds_alike(run, term)

        @staticmethod
        def _about_a_person(run: list[str]) -> bool:
            return "persons" not in rules and VocabularyCorrector._about_a_person(run)

        @staticmethod
        def _names_a_side(run: list[str]) -> bool:
            return "sides" not in rules and VocabularyCorrector._names_a_side(run)

    return Without


class BothWays:
    """DecodeOptions.review: each segment decided without and with the rules on the same audio (kept in
    `decided`, by heard text), then reviewed as shipped so that the reply is the stage's own."""

    def __init__(self, shipped: SegmentReviewer, rules: set[str]) -> None:
        self.shipped = shipped
        old = without(rules)(shipped.corrector.terms, shipped.corrector._phonemizer, shipped.corrector.min_similarity,
                          shipped.corrector.common_word)
        self.before = SegmentReviewer(shipped.tokenizer, old, shipped.write_numbers, shipped.settings,
                                      shipped.bias_check)
        self.decided: dict[str, tuple[Decided, Decided]] = {}

    def __call__(self, window: Any) -> None:
        for k, segment in enumerate(window.segments):
            scorer = self.shipped._scorer(window, k)
            check = self.shipped.bias_check
            unbiased = check.proposals(scorer, segment.text.strip()) if check else []
            before = self.before.decide(segment.text, scorer, unbiased)
            after = self.shipped.decide(segment.text, scorer, unbiased)
            if before is not None and after is not None:
                self.decided[before.heard] = (before, after)
        self.shipped(window)


def _vocabulary(decided: Decided) -> dict[tuple[int, int, str], bool]:
    """(start, end, term) of each vocabulary proposal -> whether the audio kept it."""
    kept = {(c["start_char"], c["end_char"], c["term"]): True for c in decided.corrections
            if c.get("source") != "unbiased decoder"}
    tried = {(c["start_char"], c["end_char"], c["proposed"]): False for c in decided.considered
             if c["kind"] == "vocabulary"}
    return {**tried, **kept}


def run_set(harness: PluginHarness, review: BothWays, clips: list, terms: list[str]) -> dict[str, Any]:
    pairs: dict[str, list[tuple[str, str]]] = {"before": [], "after": []}
    counts: Counter = Counter()
    changes = []
    for clip in clips:
        review.decided.clear()
        [reply] = harness.request(Message("transcribe", payload=clip.path.read_bytes(), final=True,
                                          audio=AudioFormat("wav")))
        texts: dict[str, list[str]] = {"before": [], "after": []}
        for segment in reply.data["segments"]:
            before, after = review.decided.get(segment["heard"], (None, None))
            if after is None or after.text != segment["text"]:
                counts["segments not replayed"] += 1
                before = after = None
            texts["before"].append(before.text if before else segment["text"])
            texts["after"].append(segment["text"])
            if before is not None:
                old, new = _vocabulary(before), _vocabulary(after)
                for key in old.keys() - new.keys():
                    counts["refused"] += 1
                    counts["refused, audio kept"] += old[key]
                    changes.append(("refused", old[key], before.heard[key[0]:key[1]], key[2], before.heard))
                for key in new.keys() - old.keys():
                    counts["new"] += 1
                    counts["new, audio kept"] += new[key]
                    changes.append(("new", new[key], after.heard[key[0]:key[1]], key[2], after.heard))
        for side in ("before", "after"):
            text = " ".join(texts[side]).strip()
            pairs[side].append((clip.reference, text))
            counts[f"numbers wrong {side}"] += number_errors(clip.reference, text)
            counts[f"invented {side}"] += len(invented_terms(clip.reference, text, terms))
    return {"wer": {side: corpus_wer(p) for side, p in pairs.items()}, "counts": counts, "changes": changes,
            "clips": len(clips), "texts": pairs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS))
    parser.add_argument("--without", nargs="+", choices=RULES, required=True, help="the rules to switch off")
    args = parser.parse_args()
    corpus = asr.clips()
    terms = read_vocabulary(default_vocabulary_path())
    with PluginHarness("whisper", {"beam_size": 5, "vocabulary_biasing": True}, Path(tempfile.mkdtemp())) as h:
        review = BothWays(h.plugin._reviewer, set(args.without))
        h.plugin._reviewer = review
        for name in args.sets:
            result = run_set(h, review, corpus[name], terms)
            c, wer = result["counts"], result["wer"]
            print(f"{name} ({result['clips']} clips{', tuning' if name == 'tune' else ''}): "
                  f"refused {c['refused']} (audio kept {c['refused, audio kept']}), "
                  f"new {c['new']} (audio kept {c['new, audio kept']}); "
                  f"WER {100 * wer['before']:.2f} -> {100 * wer['after']:.2f} %; "
                  f"numbers wrong {c['numbers wrong before']} -> {c['numbers wrong after']}; "
                  f"invented {c['invented before']} -> {c['invented after']}; "
                  f"segments not replayed {c['segments not replayed']}", flush=True)
            for kind, kept, heard, term, segment in result["changes"]:
                print(f"    {kind:<8} {'kept' if kept else 'rejected':<9} {heard!r} -> {term!r}   in {segment!r}")
            for (ref, old), (_, new) in zip(result["texts"]["before"], result["texts"]["after"], strict=True):
                if old != new:
                    print(f"    text  {ref!r}\n      before {old!r}\n      after  {new!r}")


if __name__ == "__main__":
    main()
