"""Synthetic medical speech for the ASR benchmark and tests, made offline with espeak-ng and Piper.

No recorded corpus of a medic's words can ship with tcccd, so the benchmark
speaks the committed sentence lists (tests/data/asr/tune.txt, heldout.txt)
with several espeak-ng voices and speeds, some with a light noise floor, and
with the kit's own Piper voice (joe) at three speaking rates, plus a 45 s
recording of sentences with pauses and clips that hold no speech at all
(silence, white/pink/brown noise, breathing). Everything lands in bench/out/,
which git ignores; `python bench/asr_corpus.py` rebuilds it. `--samples samples/`
writes the demo's samples (Piper), `--espeak-samples tests/data/espeak-samples`
the tests' espeak-ng ones.
`--safety` writes the committed safety set (tests/data/safety-speech/: Piper
reading tests/data/asr/safety.txt); Piper's synthesis draws random noise, so
those clips are made once and committed rather than made again at test time.
"""

from __future__ import annotations

import argparse
import functools
import io
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import soundfile
import soxr

RATE_HZ = 16000
ROOT = Path(__file__).resolve().parent.parent
SENTENCES_DIR = ROOT / "tests" / "data" / "asr"
REAL_SPEECH_DIR = ROOT / "tests" / "data" / "real-speech"
SAFETY_DIR = ROOT / "tests" / "data" / "safety-speech"
PIPER_LENGTH_SCALES = (0.8, 1.0, 1.25)  # the kit's voice fast, as shipped, slow (Piper's length_scale)
VOICES = ("en-us", "en-us+m3", "en-us+f2", "en+klatt")
SPEEDS_WPM = (140, 150, 160, 175)
LONG_REAL_CLIPS = ("s001", "s036", "s045", "s010", "s033", "s047", "s008", "s035")
NOISE_KINDS = ("silence", "white", "pink", "brown", "breathing")
ESPEAK_SAMPLES = (  # tests/data/espeak-samples: robotic voices the tests keep (written by --espeak-samples)
    ("tourniquet.wav", "tourniquet applied at zero nine fifteen", "en-us", 150, 16000, 1),
    ("heart_rate.wav", "heart rate one twenty", "en-us+m3", 150, 16000, 1),
    ("txa.wav", "TXA given", "en-us+f2", 145, 16000, 1),
    ("medevac.wav", "request urgent medevac for one litter casualty", "en-us", 160, 22050, 2),
    ("airway.wav", "nasopharyngeal airway inserted", "en+klatt", 150, 16000, 1),
)
DEMO_SAMPLES = (  # samples/: the kit's own Piper voice at several rates (length_scale; written by --samples)
    ("joe-tourniquet.wav", "Tourniquet applied to the left leg at zero nine fifteen.", 1.0),
    ("joe-txa.wav", "Gave one gram of TXA at zero nine twenty.", 0.8),
    ("joe-vitals.wav", "Pulse is one hundred and ten, blood pressure one twenty over eighty.", 1.25),
    ("joe-first-one.wav", "The first one on the left arm is fine, no tourniquet needed.", 1.0),
    ("joe-burns.wav", "Burns to the chest and both arms.", 0.8),
)
DEMO_REAL = (("tests/data/real-speech/s014.wav", "Go forward ten meters."),)  # a real voice (see its SOURCES.md)


@dataclass(frozen=True)
class Clip:
    path: Path
    reference: str
    phrases: tuple[tuple[str, float, float], ...] = ()  # long recordings: (sentence, start_s, end_s) in the file


def read_sentences(split: str) -> list[str]:
    lines = (SENTENCES_DIR / f"{split}.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def speak(text: str, voice: str = "en-us", speed_wpm: int = 150, rate_hz: int = RATE_HZ) -> np.ndarray:
    """espeak-ng's WAV output (22.05 kHz) as float32 mono at rate_hz."""
    wav = subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed_wpm), "--stdout", text],
                         check=True, capture_output=True).stdout
    audio, source_hz = soundfile.read(io.BytesIO(wav), dtype="float32")
    return soxr.resample(audio, source_hz, rate_hz).astype(np.float32)


@functools.lru_cache(maxsize=1)
def _joe() -> Any:
    from piper import PiperVoice

    from tcccd.plugins.piper.plugin import default_voice_path

    return PiperVoice.load(str(default_voice_path()))


def speak_joe(text: str, length_scale: float = 1.0, rate_hz: int = RATE_HZ) -> np.ndarray:
    """The kit's own Piper voice (joe, 22.05 kHz) as float32 mono at rate_hz, 0.25 s of silence either side."""
    from piper import SynthesisConfig

    chunks = list(_joe().synthesize(text, SynthesisConfig(length_scale=length_scale)))
    audio = soxr.resample(np.concatenate([c.audio_float_array for c in chunks]), chunks[0].sample_rate, rate_hz)
    pad = np.zeros(rate_hz // 4, np.float32)
    return np.concatenate([pad, audio.astype(np.float32), pad])


def noise(kind: str, seconds: float, rng: np.random.Generator, rms: float = 0.05) -> np.ndarray:
    """Audio that holds no words: what the recogniser must answer with an empty transcript."""
    n = int(seconds * RATE_HZ)
    if kind == "silence":
        return np.zeros(n, np.float32)
    white = rng.standard_normal(n)
    if kind == "white":
        shaped = white
    elif kind in ("pink", "brown", "breathing"):
        spectrum = np.fft.rfft(white)
        freqs_hz = np.fft.rfftfreq(n, 1 / RATE_HZ)
        exponent = 0.5 if kind == "pink" else 1.0
        weight = 1 / np.maximum(freqs_hz, 20.0) ** exponent
        if kind == "breathing":
            weight = np.where((freqs_hz > 200) & (freqs_hz < 2500), 1.0, 0.02)
        shaped = np.fft.irfft(spectrum * weight, n)
        if kind == "breathing":
            shaped *= _breath_envelope(n)
    else:
        raise ValueError(f"noise kind {kind!r}: expected one of {', '.join(NOISE_KINDS)}")
    return (shaped * rms / max(1e-9, float(np.sqrt(np.mean(shaped**2))))).astype(np.float32)


def _breath_envelope(n: int) -> np.ndarray:
    """Inhale/exhale bursts: about 1 s of rising and falling air, 1.5 s apart."""
    t_s = np.arange(n) / RATE_HZ
    phase = (t_s % 2.5) / 1.0
    return np.where(phase < 1.0, np.sin(np.pi * np.clip(phase, 0, 1)) ** 2, 0.0)


def add_noise_floor(audio: np.ndarray, snr_db: float, rng: np.random.Generator) -> np.ndarray:
    speech_rms = float(np.sqrt(np.mean(audio**2)))
    floor = rng.standard_normal(len(audio)) * speech_rms / 10 ** (snr_db / 20)
    return (audio + floor).astype(np.float32)


def _write(path: Path, audio: np.ndarray, rate_hz: int = RATE_HZ) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    soundfile.write(path, audio, rate_hz, subtype="PCM_16")


def real_speech() -> list[Clip]:
    """Real human voices with their references (tests/data/real-speech/refs.tsv); hyphens score as spaces."""
    lines = (REAL_SPEECH_DIR / "refs.tsv").read_text().splitlines()
    pairs = [line.split("\t", 1) for line in lines if line.strip()]
    return [Clip(REAL_SPEECH_DIR / f"{clip_id}.wav", text.replace("-", " ")) for clip_id, text in pairs]


def build_split(split: str, out_dir: Path, seed: int = 7) -> list[Clip]:
    """One clip per sentence, voices and speeds rotating, every other clip with a 25-35 dB noise floor."""
    rng = np.random.default_rng(seed + len(split))
    clips = []
    for i, text in enumerate(read_sentences(split)):
        path = out_dir / split / f"{i:03d}.wav"
        if not path.exists():
            audio = speak(text, VOICES[i % len(VOICES)], SPEEDS_WPM[(i // len(VOICES)) % len(SPEEDS_WPM)])
            audio = np.concatenate([np.zeros(RATE_HZ // 4, np.float32), audio, np.zeros(RATE_HZ // 4, np.float32)])
            if i % 2:
                audio = add_noise_floor(audio, float(rng.uniform(25, 35)), rng)
            _write(path, audio)
        clips.append(Clip(path, text))
    return clips


def build_piper_split(split: str, out_dir: Path) -> list[Clip]:
    """Every sentence of a split read by the kit's Piper voice at each of PIPER_LENGTH_SCALES."""
    clips = []
    for i, text in enumerate(read_sentences(split)):
        for scale in PIPER_LENGTH_SCALES:
            path = out_dir / f"piper-{split}" / f"{i:03d}-{scale}.wav"
            if not path.exists():
                _write(path, speak_joe(text, scale))
            clips.append(Clip(path, text))
    return clips


def build_safety(out_dir: Path = SAFETY_DIR) -> None:
    """The safety set's committed clips: safety.txt read by Piper at each rate, 16 kHz FLAC. Only missing clips
    are made (delete a sentence's clips after editing it)."""
    for i, text in enumerate(read_sentences("safety")):
        for scale in PIPER_LENGTH_SCALES:
            path = out_dir / f"{i:03d}-{scale}.flac"
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                soundfile.write(path, speak_joe(text, scale), RATE_HZ, subtype="PCM_16", format="FLAC")


def safety_clips() -> list[Clip]:
    """Ordinary sentences with sound-alikes of lexicon terms: Piper (committed clips) and real voices."""
    clips = [Clip(SAFETY_DIR / f"{i:03d}-{scale}.flac", text)
             for i, text in enumerate(read_sentences("safety")) for scale in PIPER_LENGTH_SCALES]
    real = {clip.path.stem: clip for clip in real_speech()}
    ids = [line.split("\t", 1)[0] for line in (SENTENCES_DIR / "safety_real.txt").read_text().splitlines()
           if line.strip() and not line.startswith("#")]
    return clips + [real[clip_id] for clip_id in ids]


def build_long(out_dir: Path, min_seconds: float = 45.0, seed: int = 11, split: str = "heldout") -> Clip:
    """A split's sentences one after another with 0.6-1.5 s pauses, as a medic talks through a casualty."""
    rng = np.random.default_rng(seed)
    pieces, phrases, at = [], [], 0
    for i, text in enumerate(read_sentences(split)):
        speech = speak(text, VOICES[i % len(VOICES)], 155)
        pause = np.zeros(int(rng.uniform(0.6, 1.5) * RATE_HZ), np.float32)
        pieces += [speech, pause]
        phrases.append((text, at / RATE_HZ, (at + len(speech)) / RATE_HZ))
        at += len(speech) + len(pause)
        if at >= min_seconds * RATE_HZ:
            break
    path = out_dir / ("long45.wav" if split == "heldout" else f"long45-{split}.wav")
    if not path.exists():
        _write(path, add_noise_floor(np.concatenate(pieces), 35.0, rng))
    return Clip(path, " ".join(text for text, _, _ in phrases), tuple(phrases))


def build_long_real(out_dir: Path) -> Clip:
    """Eight real clips (sonnet quatrains, a novel, phone prompts) with natural pauses, 72 s: the long form on
    real voices (tests/plugins/whisper/review/test_review.py holds the same recording)."""
    refs = {clip.path.stem: clip.reference for clip in real_speech()}
    pieces, phrases, at = [], [], 0
    for i, name in enumerate(LONG_REAL_CLIPS):
        audio, rate_hz = soundfile.read(REAL_SPEECH_DIR / f"{name}.wav", dtype="float32")
        pause = np.zeros(int((0.7, 1.2, 0.4, 0.9)[i % 4] * rate_hz), np.float32)
        phrases.append((refs[name], at / rate_hz, (at + len(audio)) / rate_hz))
        pieces += [audio, pause]
        at += len(audio) + len(pause)
    path = out_dir / "long72-real.wav"
    _write(path, np.concatenate(pieces), rate_hz)
    return Clip(path, " ".join(text for text, _, _ in phrases), tuple(phrases))


def build_noise(out_dir: Path, seconds: float = 5.0, seed: int = 3) -> list[Clip]:
    rng = np.random.default_rng(seed)
    clips = []
    for kind in NOISE_KINDS:
        path = out_dir / "noise" / f"{kind}.wav"
        audio = noise(kind, seconds, rng)
        if not path.exists():
            _write(path, audio)
        clips.append(Clip(path, ""))
    return clips


def build_espeak_samples(samples_dir: Path) -> None:
    """The espeak-ng samples the tests use and their references.txt (file<TAB>reference)."""
    lines = []
    for name, text, voice, speed_wpm, rate_hz, channels in ESPEAK_SAMPLES:
        audio = speak(text, voice, speed_wpm, rate_hz)
        audio = np.concatenate([np.zeros(rate_hz // 5, np.float32), audio, np.zeros(rate_hz // 5, np.float32)])
        _write(samples_dir / name, np.repeat(audio[:, None], channels, axis=1) if channels > 1 else audio, rate_hz)
        lines.append(f"{name}\t{text}")
    (samples_dir / "references.txt").write_text("\n".join(lines) + "\n")


def build_demo_samples(samples_dir: Path) -> None:
    """The demo's samples (the kit's Piper voice) and samples/references.txt (path from the repository<TAB>
    reference), the real recordings listed after them."""
    lines = []
    for name, text, scale in DEMO_SAMPLES:
        _write(samples_dir / name, speak_joe(text, scale))
        lines.append(f"samples/{name}\t{text}")
    lines += [f"{path}\t{text}" for path, text in DEMO_REAL]
    (samples_dir / "references.txt").write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "asr")
    parser.add_argument("--samples", type=Path, help="write the demo samples (Piper) into this folder instead")
    parser.add_argument("--espeak-samples", type=Path, help="write the tests' espeak-ng samples into this folder")
    parser.add_argument("--safety", action="store_true", help="write the committed safety set (tests/data)")
    args = parser.parse_args()
    if args.samples:
        build_demo_samples(args.samples)
        return
    if args.espeak_samples:
        build_espeak_samples(args.espeak_samples)
        return
    if args.safety:
        build_safety()
        return
    for split in ("tune", "heldout"):
        print(split, len(build_split(split, args.out)), "clips")
    print("long", build_long(args.out).path)
    print("noise", [c.path.name for c in build_noise(args.out)])


if __name__ == "__main__":
    main()
