"""Whisper's tokenizer read from the model's own tokenizer.json.

The special tokens' ids differ between English-only and multilingual models,
so they are looked up by name in the file rather than hard-coded.
"""

from __future__ import annotations

from pathlib import Path

from tokenizers import Tokenizer as HFTokenizer


class TokenizerError(ValueError):
    """tokenizer.json is missing or lacks a token Whisper needs."""


class Tokenizer:
    def __init__(self, path: Path, multilingual: bool, language: str = "en") -> None:
        if not Path(path).is_file():
            raise TokenizerError(f"no tokenizer.json at {path}")
        self._tok = HFTokenizer.from_file(str(path))
        self.eot = self._special("<|endoftext|>")
        self.sot = self._special("<|startoftranscript|>")
        self.transcribe = self._special("<|transcribe|>")
        self.translate = self._special("<|translate|>")
        self.sot_lm = self._special("<|startoflm|>")
        self.sot_prev = self._special("<|startofprev|>")
        self.no_speech = self._tok.token_to_id("<|nospeech|>") or self._special("<|nocaptions|>")
        self.no_timestamps = self._special("<|notimestamps|>")
        self.timestamp_begin = self.no_timestamps + 1
        self.multilingual = multilingual
        self.sot_sequence: tuple[int, ...] = (self.sot,)
        if multilingual:
            self.sot_sequence = (self.sot, self._special(f"<|{language}|>"), self.transcribe)

    def _special(self, token: str) -> int:
        token_id = self._tok.token_to_id(token)
        if token_id is None:
            raise TokenizerError(f"tokenizer.json lacks the special token {token}")
        return token_id

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False).ids

    def decode(self, ids: list[int]) -> str:
        """Text of the ids, without special or timestamp tokens."""
        return self._tok.decode([i for i in ids if i < self.eot])

    def continues_word(self, token: int) -> bool:
        """A text token that carries on the word before it: no leading space, a letter or digit first."""
        piece = self.decode([token]) if token < self.eot else ""
        return bool(piece) and piece[0].isalnum()

    def non_speech_tokens(self) -> tuple[int, ...]:
        """The special tokens openai always adds to the suppressed set (the model's own list has the symbols)."""
        return (self.transcribe, self.translate, self.sot, self.sot_prev, self.sot_lm, self.no_speech)

    def symbol_tokens(self) -> tuple[int, ...]:
        """openai's default suppressed set for checkpoints without a config.json: tokens that are only symbols.

        Suppressing them keeps the model from writing speaker tags, music notes
        and brackets that are not speech.
        """
        symbols = list('"#()*+/:;<=>@[\\]^_`{|}~「」『』')
        symbols += ["<<", ">>", "<<<", ">>>", "--", "---", "-(", "-[", "('", '("', "((", "))", "(((", ")))",
                    "[[", "]]", "{{", "}}", "♪♪", "♪♪♪"]
        miscellaneous = set("♩♪♫♬♭♮♯")
        result = {self.encode(" -")[0], self.encode(" '")[0]}
        for symbol in symbols + sorted(miscellaneous):
            for tokens in (self.encode(symbol), self.encode(" " + symbol)):
                if len(tokens) == 1 or symbol in miscellaneous:
                    result.add(tokens[0])
        return tuple(sorted(result))
