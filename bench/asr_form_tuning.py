"""Choose the margin for numbers in a form nobody says (number_forms.py) on the tune set only.

The whisper stage runs on tune.txt's clips (asr_review_tuning.tune_clips: espeak-ng 4 voices, Piper joe at 3
rates, the sentences read as one recording) with `form_margin_logprob` at -100, so no such number is written:
each is listed in `uncertain` with every reading and the segment's score with it. A reading made from the
pieces heard ("0922" for "0.922") is labelled `right` when its digits are a number the reference says (in the
WER form, textnorm.normalize), `wrong` otherwise. The margin is SAFETY_GAP_LOGPROB short of the best-scored
wrong reading, or just past the worst-scored right one when none is wrong; the other readings (the decoder's
own digits, twins) are listed for the report: they are never written. The same is counted on any other set
named with --split (reporting only: nothing is chosen from them).

    .venv/bin/python bench/asr_form_tuning.py [--split medical_eval ...]

Measured at 3599c57 (form margin -100 so nothing written): tune has 3 such numbers with a reading from their
digits: '28th' -> 28 at +0.48 (right), 'zero 930' -> 0930 at -4.37 (right), '0.515' -> 0515 at -2.99 (wrong:
'zero nine fifteen' was said): chosen margin -0.01, shipped as 0. Reporting only: medical_eval '0.6 hundred' ->
0600 +0.73, '1 30' -> 130 -1.87, '0.922' -> 0922 -6.53 (all right); medical_eval_b '0.84d' -> 0840 -5.23
(right); heldout '0.515' -> 0515 +2.30 (wrong, doubted: its twin 0550 scores within the twin margin).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import asr_corpus  # noqa: E402
from asr_review_tuning import OUT, SAFETY_GAP_LOGPROB, tune_clips  # noqa: E402

from tcccd.kit.testing import PluginHarness  # noqa: E402
from tcccd.plugins.whisper.review.textnorm import normalize  # noqa: E402
from tcccd.wire.protocol import AudioFormat, Message  # noqa: E402

WRITE_NONE = {"form_margin_logprob": -100.0}


def forms(clips: list[asr_corpus.Clip]) -> list[dict]:
    """Every number in a form nobody says on `clips`, with its readings and labels."""
    rows = []
    with PluginHarness("whisper", {"beam_size": 5, **WRITE_NONE}, Path(tempfile.mkdtemp())) as harness:
        for clip in clips:
            [reply] = harness.request(Message("transcribe", payload=clip.path.read_bytes(), final=True,
                                              audio=AudioFormat("wav")))
            said = set(re.findall(r"\d+", normalize(clip.reference)))
            for segment in reply.data["segments"]:
                for u in segment["uncertain"]:
                    if u.get("readings") is None:
                        continue
                    for r in u["readings"]:
                        rows.append({"clip": clip.path.name, "heard": u["text"], "reading": r["text"],
                                     "source": r["source"], "delta": r["audio_logprob"] - u["audio_logprob_heard"],
                                     "label": "right" if r["text"].lstrip("0") in {d.lstrip("0") for d in said}
                                     else "wrong"})
    return rows


def table(rows: list[dict], title: str) -> None:
    print(f"\n{title}: {len({(r['clip'], r['heard']) for r in rows})} numbers in a form nobody says")
    for r in sorted(rows, key=lambda r: -r["delta"]):
        print(f"   {r['delta']:7.2f} {r['label']:<6} {r['source']:<13} {r['clip']:<14} {r['heard']!r} -> "
              f"{r['reading']!r}")


def chosen(rows: list[dict]) -> float:
    own = [r for r in rows if r["source"] == "heard"]
    wrong = [-r["delta"] for r in own if r["label"] == "wrong"]
    if wrong:
        return min(wrong) - SAFETY_GAP_LOGPROB
    return max([-r["delta"] for r in own], default=0.0) + 0.5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", nargs="*", default=[], help="reporting sets to count as well")
    args = parser.parse_args()
    tune = forms(tune_clips())
    table(tune, "tune (chooses the margin)")
    print(f"\nchosen form_margin_logprob: {chosen(tune):.2f} (a reading from the pieces heard is written when it "
          f"scores at most this far below what was heard)")
    for split in args.split:
        clips = asr_corpus.real_speech() if split == "real" else asr_corpus.build_split(split, OUT)
        table(forms(clips), f"{split} (reporting only)")


if __name__ == "__main__":
    main()
