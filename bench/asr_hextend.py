"""Whether the vocabulary step's numbers rule costs "Hextend": does tiny.en ever write it as "hex ten"?

The rule (vocabulary.py) refuses "hex ten" -> "Hextend": the run says a ten the term does not. That costs a
correction only if the decoder writes the term's last syllable as the number word. Six sentences with Hextend
(five from the card corpus's tune sets, one written here) are read by the kit's Piper voice at its three rates
and by espeak-ng's four voices (bench/asr_corpus.py), 42 clips, and run through the whisper stage as shipped
(beam 5, bias on); each clip's heard text is printed with the record's, and counted: clips whose heard text
holds "ten" or "10" right after "hex", and clips whose record holds "Hextend". Tuning data: it decided the rule.

Measured (commit of this file, 2-core machine): "hex ten"/"hex 10" heard in 0 of 42 clips (tiny.en wrote "Hext
End", "Hexdend", "hex end", "hexed end", "next end", "Text and", "Hexten", "Hexton", "air extent"...); the
record holds Hextend in 18 and 17 of 42 in two runs (Piper's synthesis draws random noise). So no exception is
kept for "hex ten": on this data it would never fire.

    .venv/bin/python bench/asr_hextend.py
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import asr_corpus  # noqa: E402

from tcccd.kit.audio import wav_bytes  # noqa: E402
from tcccd.kit.testing import PluginHarness  # noqa: E402
from tcccd.wire.protocol import AudioFormat, Message  # noqa: E402

SENTENCES = ("Hung five hundred of Hextend.", "Hextend five hundred in, asking the bird to bring blood.",
             "Hold the Hextend, he's still got a good radial.",
             "Another five hundred of Hextend is due if his radial drops.", "Start Hextend through the IO.",
             "He'd probably do better with plasma than Hextend.")
HEX_TEN = re.compile(r"\bhex\W*(ten|10)\b", re.IGNORECASE)


def readings(sentence: str) -> list[tuple[str, object]]:
    """The sentence by Piper at each rate and by each espeak-ng voice, as (name, 16 kHz float32 audio)."""
    out: list[tuple[str, object]] = [(f"joe {s}", asr_corpus.speak_joe(sentence, s))
                                     for s in asr_corpus.PIPER_LENGTH_SCALES]
    return out + [(voice, asr_corpus.speak(sentence, voice, 150)) for voice in asr_corpus.VOICES]


def main() -> None:
    clips = hex_ten = written = 0
    with PluginHarness("whisper", {"beam_size": 5, "vocabulary_biasing": True}, Path(tempfile.mkdtemp())) as h:
        for sentence in SENTENCES:
            for name, audio in readings(sentence):
                [reply] = h.request(Message("transcribe", payload=wav_bytes(audio, asr_corpus.RATE_HZ), final=True,
                                            audio=AudioFormat("wav")))
                heard = " ".join(s["heard"] for s in reply.data["segments"])
                clips, hex_ten = clips + 1, hex_ten + bool(HEX_TEN.search(heard))
                written += "hextend" in reply.data["text"].lower()
                print(f"{name:<9} heard {heard!r:<60} record {reply.data['text']!r}", flush=True)
    print(f"'hex ten' heard in {hex_ten} of {clips} clips; Hextend in the record in {written} of {clips}")


if __name__ == "__main__":
    main()
