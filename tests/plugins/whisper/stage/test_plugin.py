"""The whisper stage as the daemon drives it: files, streams, bad input, silence, profiles, vocabulary proof."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from tcccd.kit.audio import to_pcm16, wav_bytes
from tcccd.kit.testing import PluginHarness
from tcccd.plugins.whisper.review.textnorm import corpus_wer, normalize
from tcccd.plugins.whisper.stage.plugin import WhisperPlugin
from tcccd.wire.protocol import AudioFormat, Message
from tests.plugins.whisper.conftest import rebuild_text, word_recall

ROOT = Path(__file__).resolve().parents[4]
ESPEAK_SAMPLES = ROOT / "tests" / "data" / "espeak-samples"  # espeak-ng voices (bench/asr_corpus.py --samples)
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    with PluginHarness("whisper", {"beam_size": 1}, tmp_path_factory.mktemp("whisper")) as h:
        yield h


def transcribe(harness, payload, audio=None):
    [reply] = harness.request(Message("transcribe", payload=payload, final=True, audio=audio or AudioFormat("wav")))
    return reply


def with_params(harness, **changes):
    params = harness.plugin.params.model_copy(update=changes)
    harness.plugin.apply_profile(params)


def test_bundled_samples_transcribe_close_to_their_references(harness):
    lines = (ESPEAK_SAMPLES / "references.txt").read_text().splitlines()
    pairs = []
    for line in lines:
        name, reference = line.split("\t")
        reply = transcribe(harness, (ESPEAK_SAMPLES / name).read_bytes())
        assert reply.type == "transcript" and reply.final
        assert reply.data["duration_s"] > 0.5 and reply.data["backend"] == "onnxruntime"
        pairs.append((reference, reply.data["text"]))
    heard = dict(pairs)
    assert all(heard.values())
    assert "heart rate 120" in normalize(heard["heart rate one twenty"])
    assert "medevac" in normalize(heard["request urgent medevac for one litter casualty"])


@pytest.mark.parametrize("kind", ["silence", "white", "pink", "brown", "breathing"])
def test_no_words_over_silence_or_noise_with_vocabulary_on(harness, corpus, kind):
    assert harness.plugin.params.vocabulary_correction and harness.plugin.health()["vocabulary_biasing"]
    audio = corpus.noise(kind, 5.0, np.random.default_rng(4))
    reply = transcribe(harness, wav_bytes(audio, 16000))
    assert reply.data["text"] == "" and reply.data["segments"] == []


@pytest.mark.parametrize(("payload", "audio", "code", "says"), [
    (b"", AudioFormat("wav"), "bad_audio", "empty audio"),
    (b"RIFF\x00\x00not a wav at all", AudioFormat("wav"), "bad_audio", "cannot read"),
    (b"\x01\x02\x03", AudioFormat("pcm_s16le", 16000, 1), "bad_audio", "whole number"),
])
def test_bad_input_gets_a_clear_error_and_the_stage_goes_on(harness, payload, audio, code, says):
    reply = transcribe(harness, payload, audio)
    assert reply.type == "error" and reply.final
    assert reply.data["code"] == code and says in reply.data["message"]
    assert transcribe(harness, wav_bytes(np.zeros(16000, np.float32), 16000)).type == "transcript"


def test_too_long_audio_is_refused_and_profiles_do_not_reload_the_model(harness):
    engine = harness.plugin._transcriber
    with_params(harness, max_audio_s=2.0, beam_size=2)
    try:
        reply = transcribe(harness, wav_bytes(np.zeros(3 * 16000, np.float32), 16000))
        assert reply.data["code"] == "too_long" and "limit is 2 s" in reply.data["message"]
    finally:
        with_params(harness, max_audio_s=600.0, beam_size=1)
    assert harness.plugin._transcriber is engine


def test_raw_pcm_at_another_rate_is_resampled(harness, corpus):
    audio = corpus.speak("heart rate one twenty", rate_hz=44100)
    reply = transcribe(harness, to_pcm16(audio), AudioFormat("pcm_s16le", 44100, 1))
    assert "heart rate 120" in normalize(reply.data["text"])


def stream_messages(pcm: bytes, chunk_bytes: int, audio: AudioFormat) -> list[Message]:
    request = Message("stream")
    chunks = [pcm[i:i + chunk_bytes] for i in range(0, len(pcm), chunk_bytes)]
    messages = [request.reply("stream", payload=c, seq=i, audio=audio if i == 0 else None)
                for i, c in enumerate(chunks)]
    messages.append(request.reply("stream", payload=b"", seq=len(chunks), final=True))
    return [Message(type="stream", id=request.id, payload=m.payload, seq=m.seq, audio=m.audio, final=m.final)
            for m in messages]


def test_stream_gives_one_transcript_per_utterance_and_a_final_summary(harness, corpus):
    pause = np.zeros(16000, np.float32)
    audio = np.concatenate([corpus.speak("heart rate one twenty"), pause, corpus.speak("medevac requested"), pause])
    outputs = harness.stream(stream_messages(to_pcm16(audio), 3200, AudioFormat("pcm_s16le", 16000, 1)))
    assert all(o.type == "transcript" for o in outputs)
    utterances = [o.data for o in outputs if o.data.get("partial") is False]
    assert [u["utterance"] for u in utterances] == [0, 1]
    assert "heart rate 120" in normalize(utterances[0]["text"])
    assert all(rebuild_text(s["heard"], s["corrections"], s["numbers"]) == s["text"]
               for u in utterances for s in u["segments"])
    final = outputs[-1]
    assert final.final and sum(o.final for o in outputs) == 1
    assert "heart rate 120" in normalize(final.data["text"]) and len(final.data["utterances"]) == 2
    assert harness.plugin.health()["open_streams"] == 0


def test_stream_sends_partials_while_an_utterance_goes_on(harness, corpus):
    """On the field profile's beam (3): with the full window greedy hears this espeak sentence as '... pearl
    pressure ...', beam 3 as '... fold pressure ...' (the truncated context used to hear 'hold')."""
    sentence = "pack the wound with hemostatic gauze and hold pressure for three minutes"
    with_params(harness, partial_interval_ms=100, beam_size=3)
    try:
        audio = corpus.speak(sentence)
        outputs = []
        for message in stream_messages(to_pcm16(audio), 1600, AudioFormat("pcm_s16le", 16000, 1)):
            time.sleep(0.1)  # a live microphone: 100 ms chunks at real-time pace (a partial decodes meanwhile)
            outputs += harness.request(message)
    finally:
        with_params(harness, partial_interval_ms=500, beam_size=1)
    partials = [o for o in outputs if o.data.get("partial") is True]
    assert partials and not any(p.final for p in partials)
    assert outputs[-1].final and "pressure for three minutes" in outputs[-1].data["text"].lower()
    assert word_recall(sentence, outputs[-1].data["text"]) >= 0.7, outputs[-1].data["text"]


def test_cancel_forgets_a_stream(harness, corpus):
    messages = stream_messages(to_pcm16(corpus.speak("TXA given")), 3200, AudioFormat("pcm_s16le", 16000, 1))
    harness.request(messages[0])
    assert harness.plugin.health()["open_streams"] == 1
    harness.plugin.cancel(messages[0].id)
    assert harness.plugin.health()["open_streams"] == 0


def test_unknown_params_are_errors():
    with pytest.raises(ValidationError):
        WhisperPlugin.validate_params({"beam": 5})
    with pytest.raises(ValidationError):
        WhisperPlugin.validate_params({"beam_size": 0})


def test_vocabulary_is_not_worse_on_held_out_sentences(harness, corpus):
    """The proof in small: held-out sentences (never tuned on), the same model, correction off then on."""
    sentences = corpus.read_sentences("heldout")[:6]
    clips = [wav_bytes(corpus.speak(s, corpus.VOICES[i % len(corpus.VOICES)]), 16000) for i, s in enumerate(sentences)]
    results = {}
    try:
        for enabled in (False, True):
            with_params(harness, vocabulary_correction=enabled)
            results[enabled] = [(s, transcribe(harness, c).data["text"]) for s, c in zip(sentences, clips, strict=True)]
    finally:
        with_params(harness, vocabulary_correction=True)
    assert corpus_wer(results[True]) <= corpus_wer(results[False])


def three_phrases(corpus) -> tuple[np.ndarray, list[tuple[str, float, float]]]:
    """Three utterances with 2 s pauses (three VAD chunks), and where each was said."""
    pause = np.zeros(2 * 16000, np.float32)
    phrases = ("tourniquet applied to the left leg", "heart rate one twenty", "patient is breathing")
    parts, spans, at_s = [], [], 0.0
    for phrase in phrases:
        speech = corpus.speak(phrase, rate_hz=16000)
        parts += [speech, pause]
        spans.append((phrase, at_s, at_s + len(speech) / 16000))
        at_s += (len(speech) + len(pause)) / 16000
    return np.concatenate(parts), spans


def test_a_recordings_chunks_decoded_at_once_read_as_one_by_one(harness, corpus):
    """Chunks decoded one per pass (no packing): two decoding threads give the one-thread transcript."""
    audio, _ = three_phrases(corpus)
    try:
        with_params(harness, decode_workers=1, pack_windows=False)
        one = transcribe(harness, wav_bytes(audio, 16000)).data
        with_params(harness, decode_workers=2, pack_windows=False)
        two = transcribe(harness, wav_bytes(audio, 16000)).data
    finally:
        with_params(harness, decode_workers=None, pack_windows=True)
    assert len(one["segments"]) >= 3 and "heart rate 120" in normalize(one["text"])
    assert two["text"] == one["text"] and two["segments"] == one["segments"]


def test_packed_chunks_keep_every_phrase_and_every_word_on_the_files_clock(harness, corpus):
    """One window holds the three phrases (pauses cut to 0.3 s); each word is timed inside the phrase it was
    said in, on the recording's clock, and the text matches the one-pass-per-chunk text's words."""
    audio, spans = three_phrases(corpus)
    packed = transcribe(harness, wav_bytes(audio, 16000)).data
    assert "heart rate 120" in normalize(packed["text"]) and "breathing" in packed["text"]
    words = [w for s in packed["segments"] for w in s["words"]]
    for keyword, (_, start_s, end_s) in zip(("leg", "heart", "breathing"), spans, strict=True):
        [word] = [w for w in words if keyword in w["text"].lower()]
        assert start_s - 0.3 <= word["start_s"] <= word["end_s"] <= end_s + 0.3, (keyword, word, start_s, end_s)
    assert not packed.get("dropped")


def test_speech_heard_only_as_a_loop_is_reported_not_transcribed(harness, tmp_path):
    """The reply says which span was dropped and why; status counts it; the text holds no loop."""
    from tests.plugins.whisper.conftest import espeak_16k

    before = harness.plugin.health()["dropped_loops"]
    audio = espeak_16k(" ".join(["twenty."] * 10), tmp_path)  # six of them are written "2020 2020 2020"
    reply = transcribe(harness, wav_bytes(audio, 16000))
    assert reply.data["text"] == "" and reply.data["segments"] == []
    [dropped] = reply.data["dropped"]
    assert dropped["reason"] == "decoding_loop" and 0.0 <= dropped["start_s"] < dropped["end_s"]
    assert harness.plugin.health()["dropped_loops"] == before + 1


@pytest.mark.parametrize("sample", ["airway.wav", "tourniquet.wav", "heart_rate.wav"])
def test_each_segment_keeps_what_the_model_heard_beside_the_written_text(harness, sample):
    """The audit trail: 'heard' is the model's own text; every difference from it is a listed correction or
    number rewrite."""
    reply = transcribe(harness, (ESPEAK_SAMPLES / sample).read_bytes())
    segments = reply.data["segments"]
    assert segments
    for segment in segments:
        assert rebuild_text(segment["heard"], segment["corrections"], segment["numbers"]) == segment["text"]


@pytest.mark.parametrize(("spoken", "written", "rule"), [
    ("give one gram of tranexamic acid", "1 g tranexamic acid", "dose"),
    ("blood pressure one hundred over sixty", "100/60", "ratio"),
])
def test_spoken_numbers_are_written_as_a_medic_writes_them(harness, corpus, spoken, written, rule):
    [segment] = transcribe(harness, wav_bytes(corpus.speak(spoken), 16000)).data["segments"]
    assert written in segment["text"] and written not in segment["heard"]
    assert [n["rule"] for n in segment["numbers"]] == [rule]


def test_decoder_biasing_is_on_by_default_and_can_be_turned_off(harness):
    assert harness.plugin.health()["vocabulary_biasing"] and harness.plugin._options().logits_processors
    try:
        with_params(harness, vocabulary_biasing=False)
        assert not harness.plugin.health()["vocabulary_biasing"] and not harness.plugin._options().logits_processors
    finally:
        with_params(harness, vocabulary_biasing=True)


def test_a_cancelled_request_stops_decoding_and_says_why(harness, corpus):
    """Cooperative cancel: the stage answers 'cancelled' long before the recording would have been decoded."""
    import threading

    from tcccd.kit.plugin import CancelScope

    long = corpus.build_long(ROOT / "bench" / "out" / "asr")
    scope = CancelScope("cancel-me", deadline_at=None)
    message = Message("transcribe", id="cancel-me", payload=long.path.read_bytes(), final=True,
                      audio=AudioFormat("wav"))
    threading.Timer(0.5, scope.cancel, args=("the client went away",)).start()
    [reply] = list(harness.stage.handle(message, scope))
    assert reply.type == "error" and reply.final
    assert reply.data["code"] == "cancelled" and "the client went away" in reply.data["message"]
    [again] = harness.request(Message("transcribe", payload=(ESPEAK_SAMPLES / "txa.wav").read_bytes(), final=True,
                                      audio=AudioFormat("wav")))
    assert again.type == "transcript" and again.data["text"]


def test_chunks_that_never_came_are_on_the_record_of_the_utterance_they_fall_in(harness, corpus):
    """A stage that fell behind drops live chunks (and says so to nobody who reads the record): the seq they leave
    out shows the loss, and the utterance it falls in lists it in `dropped`; one after the last utterance gets an
    utterance of its own with no words."""
    pause = np.zeros(16000, np.float32)
    audio = np.concatenate([corpus.speak("tourniquet left leg"), pause, pause])
    messages = stream_messages(to_pcm16(audio), 3200, AudioFormat("pcm_s16le", 16000, 1))
    lost_in_speech, lost_at_the_end = 3, len(messages) - 2
    kept = [m for m in messages if m.seq not in (lost_in_speech, lost_at_the_end)]
    outputs = harness.stream(kept)
    utterances = [o.data for o in outputs if o.data.get("partial") is False and not o.final]
    assert len(utterances) == 2, utterances
    said, after = utterances
    assert said["dropped"] == [{"start_s": 0.3, "end_s": 0.3, "reason": "audio_lost", "chunks_missing": 1}]
    assert after["text"] == "" and [d["start_s"] for d in after["dropped"]] == [round((lost_at_the_end - 1) * 0.1, 3)]
    assert harness.plugin.health()["open_streams"] == 0


def test_a_stream_that_loses_nothing_lists_nothing_dropped(harness, corpus):
    pause = np.zeros(16000, np.float32)
    audio = np.concatenate([corpus.speak("pulse one ten"), pause])
    outputs = harness.stream(stream_messages(to_pcm16(audio), 3200, AudioFormat("pcm_s16le", 16000, 1)))
    assert not any("dropped" in o.data for o in outputs)
