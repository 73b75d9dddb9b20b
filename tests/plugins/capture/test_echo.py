"""Echo protection on a synthetic echo: a delayed, decaying copy of what was played, plus the medic talking."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

from tcccd.plugins.capture.echo import EchoGuard, EchoSettings

SPEECH = Path(__file__).resolve().parents[2] / "data" / "real-speech"
BLOCK = 320  # 20 ms at 16 kHz, as the stage hands blocks over
DELAY = 320  # 20 ms from speaker to microphone


def load(name: str) -> np.ndarray:
    audio, rate = sf.read(SPEECH / name, dtype="float32", always_2d=True)
    return soxr.resample(audio.mean(axis=1), rate, 16000).astype(np.float32)


def synthetic_echo(far: np.ndarray) -> np.ndarray:
    """Reflections every 5 ms decaying over 50 ms, 20 ms after the direct path; -10 dB at the loudest."""
    taps = np.arange(800)
    response = np.zeros(DELAY + 800, np.float32)
    response[DELAY:] = np.exp(-taps / 160.0) * (taps % 80 == 0)
    return np.convolve(far, 0.3 * response)[: len(far)].astype(np.float32)


def run(guard: EchoGuard, mic: np.ndarray, far: np.ndarray, speaking: bool = True) -> tuple[np.ndarray, list[int]]:
    out, barge_ins = [], []
    for start in range(0, len(mic) - BLOCK + 1, BLOCK):
        clean, barge_in = guard.process(mic[start:start + BLOCK], far[start:start + BLOCK], speaking, 0.0)
        out.append(clean)
        if barge_in:
            barge_ins.append(start)
    return np.concatenate(out), barge_ins


def db(x: np.ndarray) -> float:
    return float(10 * np.log10(np.mean(np.square(x, dtype=np.float64)) + 1e-20))


def best_correlation(out: np.ndarray, clean: np.ndarray, start: int, end: int) -> float:
    """AEC3's output lags its input by a few ms: the best over lags up to 20 ms."""
    return max(float(np.corrcoef(out[start + lag:end], clean[start:end - lag])[0, 1]) for lag in range(0, 320, 8))


def scene() -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    far = np.concatenate([load(f"s{i:03d}.wav") for i in (4, 1, 6, 7)])[: 16000 * 12]
    talk = load("s003.wav")
    start = 16000 * 9  # the canceller has heard 9 s of playback; the medic talks over its fourth sentence
    near = np.zeros(len(far), np.float32)
    near[start:start + len(talk)] = talk
    return far, synthetic_echo(far), near, start, start + len(talk)


def test_aec_removes_25_db_of_echo_and_keeps_the_medic() -> None:
    far, echo, near, talk_start, talk_end = scene()
    out, _ = run(EchoGuard(EchoSettings(mode="aec")), echo + near, far)
    echo_only = slice(16000 * 2, talk_start)
    assert db(echo[echo_only]) - db(out[echo_only]) >= 25.0
    assert best_correlation(out, near, talk_start, min(talk_end, len(out))) > 0.7


def test_barge_in_only_when_the_medic_talks() -> None:
    far, echo, near, talk_start, _ = scene()
    _, echo_alone = run(EchoGuard(EchoSettings(mode="aec")), echo, far)
    _, with_talk = run(EchoGuard(EchoSettings(mode="aec")), echo + near, far)
    assert echo_alone == []
    assert with_talk and with_talk[0] >= talk_start and with_talk[0] - talk_start < 0.3 * 16000


def test_gate_passes_nothing_while_speaking_and_for_the_tail() -> None:
    guard = EchoGuard(EchoSettings(mode="gate", gate_tail_ms=300))
    block, quiet = np.full(BLOCK, 0.1, np.float32), np.zeros(BLOCK, np.float32)
    assert not guard.process(block, quiet, True, 0.0)[0].any()  # queued to play: gated before it sounds
    assert not guard.process(block, quiet, False, 0.2)[0].any()  # 200 ms after the last sound: still the tail
    assert guard.process(block, quiet, False, 0.35)[0].any()
    assert guard.gated_samples == 2 * BLOCK


def test_the_gate_counts_its_tail_in_samples_when_the_stage_gets_to_the_blocks_late() -> None:
    """A loaded CPU processes the blocks of a read-back after the clock says it ended: the blocks played with
    sound, the echo delay and the tail are gated all the same (the full-suite run at load 7 heard the start of a
    read-back as the medic's words before this)."""
    guard = EchoGuard(EchoSettings(mode="gate", gate_tail_ms=300, echo_delay_ms=400))
    voice, quiet = np.full(BLOCK, 0.1, np.float32), np.zeros(BLOCK, np.float32)
    late_s = 5.0  # the clock: playback ended long ago
    assert not guard.process(voice, voice, False, late_s)[0].any()
    tail_blocks = (16000 * 700 // 1000) // BLOCK
    for _ in range(tail_blocks):
        assert not guard.process(voice, quiet, False, late_s)[0].any()  # the echo arriving late: gated
    assert guard.process(voice, quiet, False, late_s)[0].any()  # after delay + tail: the medic is heard


def test_the_gate_hears_the_medic_talk_over_the_kit_and_nothing_of_the_kit() -> None:
    """Under the gate, AEC3 and the voice detector watch what is gated: the kit's own echo never counts; the medic
    talking over it stops playback and is counted (alert, the default: nothing gated is passed), or with `pass` is
    passed from the start of that speech (issue 23: before, every word the medic started during a read-back was
    lost, silently)."""
    far, echo, near, talk_start, talk_end = scene()
    for mode in ("alert", "pass"):
        alone = EchoGuard(EchoSettings(mode="gate", talk_over=mode))
        out_alone, barge_alone = run(alone, echo, far)
        assert not out_alone.any() and barge_alone == [] and alone.talk_overs == 0

    alert = EchoGuard(EchoSettings(mode="gate"))
    out, barge_ins = run(alert, echo + near, far)
    assert alert.talk_overs == 1 and barge_ins[0] >= talk_start and barge_ins[0] - talk_start < 0.3 * 16000
    assert not out.any()  # told, never passed

    passing = EchoGuard(EchoSettings(mode="gate", talk_over="pass"))
    out, barge_ins = run(passing, echo + near, far)
    assert passing.talk_overs == 1 and barge_ins[0] >= talk_start
    first_passed = int(np.flatnonzero(out)[0])
    hold = EchoSettings().barge_in_frames * 160
    assert talk_start - hold <= first_passed <= barge_ins[0] - hold // 2  # the detector's wait is passed too
    assert best_correlation(out, near, first_passed, min(talk_end, len(out))) > 0.7


def test_the_gate_passes_every_sample_once_and_stops_what_would_play_over_the_medic() -> None:
    far, echo, near, talk_start, _ = scene()
    guard = EchoGuard(EchoSettings(mode="gate", gate_tail_ms=300, echo_delay_ms=200, talk_over="pass"))
    out, _ = run(guard, (echo + near)[: talk_start + 16000], far[: talk_start + 16000])
    assert guard.talking_over
    more = guard.process(near[:BLOCK], far[:BLOCK], False, 0.0)  # a new read-back queued while the medic talks
    assert more[1], "what would play over the medic must be stopped"
    tail = [guard.process(np.full(BLOCK, 0.01, np.float32), np.zeros(BLOCK, np.float32), False, 5.0)[0]
            for _ in range(40)]  # the tail runs out and the gate opens
    assert not guard.talking_over and tail[-1].any()
    assert len(out) + len(more[0]) + sum(map(len, tail)) == talk_start + 16000 + BLOCK + 40 * BLOCK


def test_with_talk_over_off_the_gate_hears_nothing_under_it() -> None:
    far, echo, near, _, _ = scene()
    guard = EchoGuard(EchoSettings(mode="gate", talk_over="off"))
    out, barge_ins = run(guard, echo + near, far)
    assert not out.any() and barge_ins == [] and guard.talk_overs == 0


def test_the_default_gate_never_passes_what_it_gated_even_from_a_canceller_that_is_not_cancelling() -> None:
    """What the microphone hears is not what the canceller was told was played (an echo path it has not learned):
    its output is the kit's voice, which the voice detector takes for speech. The suite once saw 0.35 of full
    scale of a read-back pass this way with `pass`; the default only counts and stops playback."""
    far, echo, _, _, _ = scene()
    unlearned = np.roll(far, 16000 * 3)  # the reference the canceller gets is some other stretch of speech
    out, _ = run(EchoGuard(EchoSettings(mode="gate")), echo, unlearned)
    assert not out.any()

