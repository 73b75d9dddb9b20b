"""Decoder biasing (plugins/whisper/review/biasing.py) on and off, on the TUNING set only: how its settings were chosen.

Sets: this script reads tests/data/asr/tune.txt (spoken by espeak-ng through
asr_corpus.build_split) and the corpus' silence/noise clips, nothing else. The
settings it compares were chosen here, so its figures are tuning figures, not
held-out ones: held-out and real-speech WER belong to bench/asr.py. Engine alone
(torch backend, full 30 s window, no VAD), each setting with and without the
vocabulary correction after it. WER has numbers and punctuation normalised.

Why no prompt: `--prompt` gives the lexicon to Whisper as its prompt, as faster-whisper's `hotwords` does.
Measured 2026-11-23 (engine alone, beam 5, WER after the correction): bias 21.9%, prompt 18.2%, prompt + bias
15.5% (no bias 27.8%). But on the noise clips the prompted engine wrote "treatment," (pink noise) and, with the
bias, "emergency trauma" (white and pink), where the unprompted engine wrote nothing but the usual "You" on
breathing. A prompt is an unconditional push toward clinical words; the bias only nudges tokens the audio already
supports. With VAD in front only noise that VAD takes for speech reaches the decoder, but clinical words over
noise is the one failure this kit must never have, so the stage ships no prompt.

    .venv/bin/python bench/asr_biasing.py [--beam 1 5] [--grid] [--prompt]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import soundfile

sys.path.insert(0, str(Path(__file__).resolve().parent))
import asr_corpus  # noqa: E402

from tcccd.plugins.whisper.review.biasing import BiasSettings, LexiconBias  # noqa: E402
from tcccd.plugins.whisper.review.textnorm import corpus_wer  # noqa: E402
from tcccd.plugins.whisper.review.vocabulary import VocabularyCorrector, default_vocabulary_path, read_vocabulary  # noqa: E402

OUT = asr_corpus.ROOT / "bench" / "out" / "asr"
# (continuation bonus, start bonus, margin): the default, then its neighbours on each axis
HOTWORDS_TOKENS = 223  # faster-whisper keeps this much of `hotwords` (max_length // 2 - 1)
GRID = ((2.0, 2.0, 3.0), (2.0, 0.0, 3.0), (2.0, 1.0, 3.0), (2.0, 3.0, 3.0), (3.0, 2.0, 3.0), (2.0, 2.0, 2.0))


def run(engine, audio: list[tuple[str, object]], corrector: VocabularyCorrector, beam: int,
        bias: LexiconBias | None, prompt: str | None = None) -> dict:
    from tcccd.plugins.whisper.engine.transcriber import DecodeOptions

    options = DecodeOptions(beam_size=beam, logits_processors=(bias,) if bias else (), prompt=prompt)
    started = time.perf_counter()
    texts = [(reference, engine.transcribe(samples, options).text.strip()) for reference, samples in audio]
    speech = [(ref, hyp) for ref, hyp in texts if ref]
    return {"raw": corpus_wer(speech), "corrected": corpus_wer((r, corrector.correct(h)) for r, h in speech),
            "noise": [hyp for ref, hyp in texts if not ref], "seconds": time.perf_counter() - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--beam", type=int, nargs="+", default=[1, 5])
    parser.add_argument("--grid", action="store_true", help="also the default's neighbours (greedy: ~30 s each)")
    parser.add_argument("--prompt", action="store_true", help="also the lexicon as Whisper's prompt (its first "
                        "223 tokens, as faster-whisper's `hotwords`), alone and with the bias")
    args = parser.parse_args()
    from tcccd.plugins.whisper.engine.transcriber import Transcriber

    clips = asr_corpus.build_split("tune", OUT) + asr_corpus.build_noise(OUT)
    audio = [(clip.reference, soundfile.read(clip.path, dtype="float32")[0]) for clip in clips]
    engine = Transcriber.load(None, backend="torch", cache_dir=Path(tempfile.mkdtemp()), threads=2)
    terms = read_vocabulary(default_vocabulary_path())
    corrector = VocabularyCorrector.load(None)
    settings = [None, *(BiasSettings(*s) for s in (GRID if args.grid else GRID[:1]))]
    print(f"set: tune.txt ({len(clips) - len(asr_corpus.NOISE_KINDS)} sentences, tunes these settings) + "
          f"{len(asr_corpus.NOISE_KINDS)} noise clips; lexicon {len(terms)} terms; CPU times are noisy")
    print(f"{'beam':>4} {'bonus/start/margin':>18} {'WER raw':>8} {'+corr.':>7} {'s':>6}  noise clips' text")
    for beam in args.beam:
        for chosen in settings:
            bias = LexiconBias.from_terms(terms, engine.tokenizer, chosen) if chosen else None
            result = run(engine, audio, corrector, beam, bias)
            label = f"{chosen.bonus_logit}/{chosen.start_bonus_logit}/{chosen.margin_logprob}" if chosen else "off"
            print(f"{beam:>4} {label:>18} {result['raw']:>8.2%} {result['corrected']:>7.2%} "
                  f"{result['seconds']:>6.1f}  {result['noise']}", flush=True)
        if args.prompt:
            prompt = engine.tokenizer.decode(engine.tokenizer.encode(" " + ", ".join(terms))[:HOTWORDS_TOKENS])
            for label, bias in (("prompt", None), ("prompt + bias", LexiconBias.from_terms(terms, engine.tokenizer))):
                result = run(engine, audio, corrector, beam, bias, prompt.strip())
                print(f"{beam:>4} {label:>18} {result['raw']:>8.2%} {result['corrected']:>7.2%} "
                      f"{result['seconds']:>6.1f}  {result['noise']}", flush=True)


if __name__ == "__main__":
    main()
