"""Greedy and beam search on real speech, and the rules that keep text off silence."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tcccd.plugins.whisper.engine.repetition import compression_ratio, repeats_at_tail
from tcccd.plugins.whisper.engine.transcriber import DecodeOptions
from tests.plugins.whisper.conftest import SENTENCE, word_recall


@pytest.mark.parametrize("beam_size", [1, 5])
def test_spoken_sentence_is_transcribed(transcriber, sentence_audio, beam_size):
    result = transcriber.transcribe(sentence_audio, DecodeOptions(beam_size=beam_size))
    assert word_recall(SENTENCE, result.text) >= 0.8, result.text
    segment = result.segments[0]
    assert 0.0 <= segment.start_s < segment.end_s <= result.duration_s + 0.02
    assert segment.avg_logprob > -1.0 and segment.no_speech_prob < 0.6


def test_without_timestamps_gives_one_segment_of_the_window(transcriber, sentence_audio):
    result = transcriber.transcribe(sentence_audio, DecodeOptions(beam_size=1, without_timestamps=True))
    assert word_recall(SENTENCE, result.text) >= 0.8, result.text
    assert all(t < transcriber.tokenizer.timestamp_begin for t in result.segments[0].tokens)


@pytest.mark.parametrize("kind", ["zeros", "white noise"])
def test_silence_and_noise_give_no_text(transcriber, kind):
    audio = np.zeros(4 * 16000, dtype=np.float32)
    if kind == "white noise":
        audio = (np.random.default_rng(1).standard_normal(4 * 16000) * 0.05).astype(np.float32)
    result = transcriber.transcribe(audio, DecodeOptions(beam_size=1))
    assert result.text == ""


def test_logits_processor_sees_the_sequence_and_steers_the_choice(transcriber, sentence_audio):
    banned = transcriber.tokenizer.encode(" bleeding")[0]
    seen: list[tuple[int, ...]] = []

    def ban_bleeding(tokens: np.ndarray, logits: np.ndarray) -> None:
        seen.append(tuple(tokens.shape))
        logits[:, banned] = -float("inf")

    options = DecodeOptions(beam_size=1, temperatures=(0.0,), logits_processors=(ban_bleeding,))
    result = transcriber.transcribe(sentence_audio, options)
    assert banned not in result.segments[0].tokens
    assert seen[0][1] == len(transcriber.tokenizer.sot_sequence)
    assert seen[1][1] == seen[0][1] + 1


def test_prompt_is_not_part_of_the_transcript(transcriber, sentence_audio):
    result = transcriber.transcribe(sentence_audio, DecodeOptions(beam_size=1, prompt="Tourniquet. Chest seal."))
    assert "Tourniquet" not in result.text
    assert word_recall(SENTENCE, result.text) >= 0.8, result.text


def test_loop_and_compression_signals():
    assert repeats_at_tail([5, 6, 7] + [1, 2, 3, 4] * 5)
    assert repeats_at_tail([9] * 20)
    sentence = [383, 5827, 318, 12704, 13]
    assert repeats_at_tail([50400] + sentence + [50500, 50500] + sentence + [50510, 50510] + sentence + [50520],
                           text_below=50256)
    assert not repeats_at_tail(list(range(40)))
    assert compression_ratio("the bleeding has stopped " * 10) > 2.4
    assert compression_ratio("The patient is breathing and the bleeding has stopped.") < 2.4


def test_int8_projection_keeps_the_transcript_and_its_confidence(transcriber, sentence_audio, tmp_path):
    """The int8 output projection is a speed/memory trade: it must not change what a clear sentence says."""
    from tcccd.plugins.whisper.engine.transcriber import Transcriber

    fp32 = Transcriber.load(None, backend="torch", cache_dir=tmp_path, threads=2, decoder_int8=False)
    assert fp32.engine.decoder.projection is None and transcriber.engine.decoder.projection is not None
    options = DecodeOptions(beam_size=5, temperatures=(0.0,))
    ours, reference = transcriber.transcribe(sentence_audio, options), fp32.transcribe(sentence_audio, options)
    assert ours.text == reference.text
    assert abs(ours.segments[0].avg_logprob - reference.segments[0].avg_logprob) < 0.05


def test_draw_samples_the_tempered_softmax_and_never_a_suppressed_token():
    from tcccd.plugins.whisper.engine.sampling import TorchCompatibleRandom, draw

    logits = np.full((4000, 51864), -np.inf, dtype=np.float32)
    logits[:, [7, 500, 51863]] = [0.0, 1.0, 2.0]
    generator = TorchCompatibleRandom(3)
    drawn = draw(logits, 1.0, generator)
    counts = np.bincount(drawn, minlength=51864)
    assert counts.sum() == 4000 and counts[[7, 500, 51863]].sum() == 4000  # nothing outside the allowed three
    expected = np.exp([0.0, 1.0, 2.0]) / np.exp([0.0, 1.0, 2.0]).sum() * 4000
    assert np.allclose(counts[[7, 500, 51863]], expected, rtol=0.1)
    cold = np.bincount(draw(logits, 0.05, generator), minlength=51864)
    assert cold[51863] > 3990  # a low temperature all but always takes the most likely token


@pytest.mark.parametrize("seed", [0, 20, 1100, 2**32 - 1])
def test_seeded_draws_are_the_ones_torch_made(seed):
    """The search moved from torch tensors to numpy: a fallback attempt still samples what it sampled."""
    from tcccd.plugins.whisper.engine.sampling import TorchCompatibleRandom, draw

    def torch_draw(logits: torch.Tensor, temperature: float, generator: torch.Generator) -> torch.Tensor:
        """decoding.draw as it was on torch tensors."""
        probs = torch.softmax(logits.double() / temperature, dim=-1)
        cdf = probs.cumsum(dim=-1)
        u = torch.rand(logits.shape[0], 1, generator=generator, dtype=torch.float64)
        chosen = torch.searchsorted(cdf, u * cdf[:, -1:], right=True)[:, 0]
        return torch.where(chosen < logits.shape[-1], chosen, probs.argmax(dim=-1))

    ours, theirs = TorchCompatibleRandom(seed), torch.Generator().manual_seed(seed)
    logits = np.random.default_rng(seed % 1000).normal(0, 3, size=(5, 51864)).astype(np.float32)
    for temperature in (0.2, 0.6, 1.0, 1.0, 0.4):
        assert np.array_equal(ours.uniform(3), torch.rand(3, generator=theirs, dtype=torch.float64).numpy())
        assert draw(logits, temperature, ours).tolist() == torch_draw(torch.from_numpy(logits), temperature,
                                                                      theirs).tolist()


@pytest.mark.parametrize("masked", [False, True])
def test_top_is_torch_topk_and_breaks_ties_by_the_lower_id(masked):
    from tcccd.plugins.whisper.engine.sampling import top

    rng = np.random.default_rng(int(masked))
    logprobs = rng.normal(-8, 4, size=(5, 51864)).astype(np.float32)
    if masked:
        logprobs[:, :50257] = -np.inf  # the timestamp rules left only timestamps
        logprobs[2, 50300:] = -np.inf  # a row with fewer finite entries than asked for
    values, ids = top(logprobs, 6)
    expected_values, expected_ids = torch.from_numpy(logprobs).topk(6, dim=-1)
    assert np.array_equal(values, expected_values.numpy())
    finite = np.isfinite(values)
    assert np.array_equal(ids[finite], expected_ids.numpy()[finite])
    tied = np.zeros((1, 10), np.float32)
    assert top(tied, 3)[1].tolist() == [[0, 1, 2]]
