"""Builds what checks a transcript after the model: the vocabulary corrector, the decoder's lexicon bias and the
segment reviewer that scores every rewrite on the audio. They share one term list, so one bad file fails them all
with one error (a ValueError saying what was wrong)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tcccd.plugins.whisper.stage.params import WhisperParams


class OneTokenWords:
    """The vocabulary corrector's common words: those Whisper's vocabulary holds whole, common enough that the
    speaker may have said them as heard."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer

    def __call__(self, word: str) -> bool:
        return len(self.tokenizer.encode(" " + word)) == 1


def build_review(params: WhisperParams, transcriber: Any, log: Any) -> tuple[Any, Any, Any]:
    """(corrector or None, bias or None, reviewer) for `params` on the loaded `transcriber`."""
    from tcccd.plugins.whisper.review.bias_check import BiasCheck
    from tcccd.plugins.whisper.review.review import ReviewSettings, SegmentReviewer
    from tcccd.plugins.whisper.review.vocabulary import (
        Phonemizer,
        VocabularyCorrector,
        default_vocabulary_path,
        read_vocabulary,
    )

    tokenizer = transcriber.tokenizer
    needed = params.vocabulary_correction or params.vocabulary_biasing
    terms = read_vocabulary(Path(params.vocabulary or default_vocabulary_path())) if needed else []
    corrector = (VocabularyCorrector(terms, Phonemizer(), params.vocabulary_min_similarity,
                                     common_word=OneTokenWords(tokenizer))
                 if params.vocabulary_correction else None)
    bias = _bias(terms, transcriber, log) if params.vocabulary_biasing else None
    bias_check = BiasCheck(terms, tokenizer) if bias is not None else None
    settings = ReviewSettings(params.term_margin_logprob, params.number_margin_logprob,
                              params.bias_margin_logprob, params.uncertain_below, params.twin_margin_logprob,
                              params.form_margin_logprob)
    return corrector, bias, SegmentReviewer(tokenizer, corrector, params.write_numbers, settings, bias_check)


def _bias(terms: list[str], transcriber: Any, log: Any) -> Any:
    """The lexicon bias, or None on ctranslate2 (its own decoder takes no logits processor)."""
    if transcriber.backend == "ctranslate2":
        log.warning("vocabulary biasing is off: the ctranslate2 backend runs its own decoder")
        return None
    from tcccd.plugins.whisper.review.biasing import LexiconBias

    return LexiconBias.from_terms(terms, transcriber.tokenizer)
