"""Decoder biasing: a term the audio supports is kept, nothing is written where the model hears no term."""

from __future__ import annotations

import numpy as np
import pytest

from tcccd.plugins.whisper.review.biasing import BiasSettings, LexiconBias, TermTrie
from tcccd.plugins.whisper.review.vocabulary import default_vocabulary_path, read_vocabulary


@pytest.fixture(scope="module")
def tokenizer():
    from tcccd.plugins.whisper.engine.convert import embedded_model_dir
    from tcccd.plugins.whisper.engine.tokenizer import Tokenizer

    return Tokenizer(embedded_model_dir() / "tokenizer.json", multilingual=False)


@pytest.fixture(scope="module")
def lexicon():
    return read_vocabulary(default_vocabulary_path())


def test_trie_follows_a_term_through_its_real_token_ids(tokenizer):
    trie = TermTrie(["tourniquet", "needle decompression"], tokenizer)
    ids = tokenizer.encode(" tourniquet")
    assert len(ids) >= 2, "the test needs a term the tokenizer splits"
    prefix = tokenizer.encode(" apply a") + ids[:1]
    continuing, starting = trie.next_tokens([tokenizer.sot, *prefix])
    assert continuing == {ids[1]}
    assert tokenizer.decode(prefix + [ids[1]]).startswith(" apply a tourn")
    capital = tokenizer.encode("Tourniquet")  # a segment's first word, as Whisper writes it without a space
    continuing, starting = trie.next_tokens([tokenizer.sot, tokenizer.timestamp_begin, *capital[:1]])
    assert capital[1] in continuing
    assert trie.next_tokens([tokenizer.sot, *tokenizer.encode(" the road")])[0] == set()
    assert tokenizer.encode(" needle decompression")[0] in starting
    after_needle = tokenizer.encode(" needle")
    assert trie.next_tokens([tokenizer.sot, *after_needle])[0] == {tokenizer.encode(" needle decompression")[1]}


def test_first_tokens_that_are_no_evidence_of_a_term_get_no_start_bonus(tokenizer):
    trie = TermTrie(["RPG", "I-gel", "needle decompression"], tokenizer, min_start_chars=3)
    _, starting = trie.next_tokens([tokenizer.sot])
    assert all(len(tokenizer.decode([t]).strip()) >= 3 for t in starting)
    assert tokenizer.encode(" needle")[0] in starting
    assert tokenizer.encode(" I-gel")[0] not in starting  # " I": a pronoun, no evidence of a term


def _logits(vocab: int, best: int, others: dict[int, float]) -> np.ndarray:
    logits = np.full((1, vocab), -30.0, dtype=np.float32)
    logits[0, best] = 10.0
    for token, value in others.items():
        logits[0, token] = value
    return logits


def test_bonus_goes_only_to_a_token_the_model_already_supports(tokenizer):
    settings = BiasSettings(bonus_logit=2.0, start_bonus_logit=1.0, margin_logprob=3.0)
    bias = LexiconBias.from_terms(["tourniquet"], tokenizer, settings)
    ids = tokenizer.encode(" tourniquet")
    history = np.array([[tokenizer.sot, *tokenizer.encode(" apply a"), ids[0]]], dtype=np.int64)
    common = tokenizer.encode(" turn")[0]
    vocab = tokenizer.timestamp_begin + 1501

    supported = _logits(vocab, common, {ids[1]: 8.0})  # within 3 nats of the best token
    before = supported.copy()
    bias(history, supported)
    assert supported[0, ids[1]] == pytest.approx(before[0, ids[1]] + 2.0)
    assert np.array_equal(np.delete(supported[0], ids[1]), np.delete(before[0], ids[1]))

    unsupported = _logits(vocab, common, {ids[1]: 5.0})  # 5 nats below: the audio does not say it
    before = unsupported.copy()
    bias(history, unsupported)
    assert np.array_equal(unsupported, before)

    over_silence = _logits(vocab, tokenizer.eot, {ids[1]: -5.0})
    before = over_silence.copy()
    bias(history, over_silence)
    assert np.array_equal(over_silence, before)


def test_bad_settings_and_empty_lexicon_are_refused(tokenizer):
    with pytest.raises(ValueError, match="must be >= 0"):
        LexiconBias.from_terms(["tourniquet"], tokenizer, BiasSettings(margin_logprob=-1.0))
    with pytest.raises(ValueError, match="term list was empty"):
        TermTrie([], tokenizer)


@pytest.mark.slow
def test_biasing_writes_nothing_new_over_silence_and_noise(transcriber, corpus, lexicon, tmp_path):
    import soundfile

    from tcccd.plugins.whisper.engine.transcriber import DecodeOptions

    bias = LexiconBias.from_terms(lexicon, transcriber.tokenizer)
    for clip in corpus.build_noise(tmp_path):
        audio = soundfile.read(clip.path, dtype="float32")[0]
        for beam in (1, 5):
            plain = transcriber.transcribe(audio, DecodeOptions(beam_size=beam)).text
            biased = transcriber.transcribe(audio, DecodeOptions(beam_size=beam, logits_processors=(bias,))).text
            assert biased == plain, f"{clip.path.name}, beam {beam}: biasing changed {plain!r} into {biased!r}"


@pytest.mark.slow
def test_biasing_does_not_raise_wer_on_the_tuning_sentences(transcriber, corpus, lexicon, tmp_path):
    """tune.txt only: the set its settings were chosen on (held-out sets measure it in bench/)."""
    import soundfile

    from tcccd.plugins.whisper.engine.transcriber import DecodeOptions
    from tcccd.plugins.whisper.review.textnorm import corpus_wer

    bias = LexiconBias.from_terms(lexicon, transcriber.tokenizer)
    clips = corpus.build_split("tune", tmp_path)
    audio = [soundfile.read(clip.path, dtype="float32")[0] for clip in clips]
    plain = [transcriber.transcribe(a, DecodeOptions(beam_size=1)).text for a in audio]
    biased = [transcriber.transcribe(a, DecodeOptions(beam_size=1, logits_processors=(bias,))).text for a in audio]
    references = [clip.reference for clip in clips]
    assert corpus_wer(zip(references, biased, strict=True)) <= corpus_wer(zip(references, plain, strict=True))
