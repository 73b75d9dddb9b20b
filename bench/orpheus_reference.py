"""The Orpheus reference streaming decoder, kept only so bench/tts.py can compare against it.

Transcribed from the Orpheus TTS project's `decoder.py` (`turn_token_into_id`,
`convert_to_audio`, `tokens_decoder`), with its behaviour kept as is: codes are
gathered element by element with torch.cat, every new frame re-decodes the last
4 frames (28 tokens) and keeps samples 2048:4096 of them, so the first frame is
never emitted and the last two are never flushed; a code of 0 is dropped
(`token > 0`). Two changes only: it takes integer token numbers instead of
strings, and returns float samples instead of int16 bytes, so signal-to-noise
can be measured. Never imported by tcccd itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import numpy as np
import torch

Decode = Callable[[list[torch.Tensor]], torch.Tensor]


def turn_token_into_id(token_number: int, index: int) -> int:
    return token_number - 10 - ((index % 7) * 4096)


def population_loop(multiframe: list[int]) -> list[torch.Tensor] | None:
    """Orpheus' per-element code layout; None when a code is out of range (it then skips the window)."""
    codes_0 = torch.tensor([], dtype=torch.int32)
    codes_1 = torch.tensor([], dtype=torch.int32)
    codes_2 = torch.tensor([], dtype=torch.int32)
    num_frames = len(multiframe) // 7
    frame = multiframe[: num_frames * 7]
    for j in range(num_frames):
        i = 7 * j
        codes_0 = torch.cat([codes_0, torch.tensor([frame[i]], dtype=torch.int32)])
        codes_1 = torch.cat([codes_1, torch.tensor([frame[i + 1]], dtype=torch.int32)])
        codes_1 = torch.cat([codes_1, torch.tensor([frame[i + 4]], dtype=torch.int32)])
        codes_2 = torch.cat([codes_2, torch.tensor([frame[i + 2]], dtype=torch.int32)])
        codes_2 = torch.cat([codes_2, torch.tensor([frame[i + 3]], dtype=torch.int32)])
        codes_2 = torch.cat([codes_2, torch.tensor([frame[i + 5]], dtype=torch.int32)])
        codes_2 = torch.cat([codes_2, torch.tensor([frame[i + 6]], dtype=torch.int32)])
    codes = [codes_0.unsqueeze(0), codes_1.unsqueeze(0), codes_2.unsqueeze(0)]
    if any(torch.any(c < 0) or torch.any(c > 4096) for c in codes):
        return None
    return codes


def tokens_to_codebooks_loop(token_numbers: list[int]) -> list[torch.Tensor] | None:
    """Token numbers of a whole utterance to codebooks, the reference way (per-token id, per-element layout)."""
    ids = [turn_token_into_id(n, i) for i, n in enumerate(token_numbers)]
    return population_loop(ids)


def convert_to_audio(multiframe: list[int], decode: Decode) -> np.ndarray | None:
    if len(multiframe) < 7:
        return None
    codes = population_loop(multiframe)
    if codes is None:
        return None
    with torch.inference_mode():
        audio_hat = decode([c.long() for c in codes])
    return audio_hat[:, :, 2048:4096].detach().cpu().numpy().reshape(-1)


def tokens_decoder(token_numbers: Iterable[int], decode: Decode) -> Iterator[np.ndarray]:
    """One 2048-sample chunk per new frame from the fourth on, as Orpheus streams."""
    buffer: list[int] = []
    count = 0
    for number in token_numbers:
        token = turn_token_into_id(number, count)
        if token > 0:
            buffer.append(token)
            count += 1
            if count % 7 == 0 and count > 27:
                audio = convert_to_audio(buffer[-28:], decode)
                if audio is not None:
                    yield audio
