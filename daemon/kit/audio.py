"""Reading audio payloads into float32 mono at the rate a model needs.

Every way audio reaches tcccd (a WAV file from a client, raw PCM chunks of a
live stream, a capture device) ends here, so the checks that turn corrupt or
empty input into a clear error live in one place.
"""

from __future__ import annotations

import io

import numpy as np

from tcccd.kit.plugin import PluginError
from tcccd.wire.protocol import AudioFormat

ACCEPTED = "a WAV/FLAC/OGG file (encoding 'wav') or raw PCM (encoding 'pcm_s16le' or 'pcm_f32le')"
MAX_DECODED_SAMPLES = 3600 * 48000  # an hour at 48 kHz: a file claiming more is refused before decoding


def decode(payload: bytes | None, fmt: AudioFormat | None, max_s: float | None = None) -> tuple[np.ndarray, int]:
    """Samples as float32 in [-1, 1], mixed to mono, and their rate in Hz.

    The duration is read from the container header (or the PCM byte count) and checked against `max_s` before
    anything is decoded: a small compressed file must not expand into gigabytes of samples.
    """
    if not payload:
        raise PluginError(f"empty audio: expected {ACCEPTED}", code="bad_audio")
    fmt = fmt or AudioFormat("wav")
    if fmt.encoding == "wav":
        return _decode_file(payload, max_s)
    _check_length(len(payload) // fmt.bytes_per_frame, fmt.sample_rate_hz, max_s)
    if len(payload) % fmt.bytes_per_frame:
        raise PluginError(f"PCM payload of {len(payload)} bytes is not a whole number of "
                          f"{fmt.bytes_per_frame}-byte frames for {fmt.encoding} x {fmt.channels} channel(s)",
                          code="bad_audio")
    dtype = np.int16 if fmt.encoding == "pcm_s16le" else np.float32
    samples = np.frombuffer(payload, dtype=dtype).reshape(-1, fmt.channels)
    audio = samples.astype(np.float32) / 32768.0 if dtype == np.int16 else samples.astype(np.float32)
    if not np.isfinite(audio).all():
        raise PluginError("PCM payload holds NaN or infinite samples", code="bad_audio")
    return audio.mean(axis=1), fmt.sample_rate_hz


def _check_length(frames: int, rate_hz: int, max_s: float | None) -> None:
    duration_s = frames / rate_hz
    if max_s is not None and duration_s > max_s:
        raise PluginError(f"audio is {duration_s:.1f} s long; the limit is {max_s:g} s "
                          f"(stream it instead, or raise max_audio_s in the config)", code="too_long")
    if frames > MAX_DECODED_SAMPLES:
        raise PluginError(f"audio claims {frames} samples ({duration_s:.0f} s); at most {MAX_DECODED_SAMPLES} "
                          f"are decoded in one request: stream it instead", code="too_long")


def _decode_file(payload: bytes, max_s: float | None) -> tuple[np.ndarray, int]:
    import soundfile

    try:
        info = soundfile.info(io.BytesIO(payload))
    except Exception as exc:  # noqa: BLE001 - libsndfile raises several types for garbage
        raise PluginError(f"cannot read the audio file ({exc}); expected {ACCEPTED}", code="bad_audio") from None
    _check_length(info.frames, info.samplerate, max_s)
    try:
        data, rate_hz = soundfile.read(io.BytesIO(payload), dtype="float32", always_2d=True)
    except Exception as exc:  # noqa: BLE001 - libsndfile raises several types for garbage
        raise PluginError(f"cannot read the audio file ({exc}); expected {ACCEPTED}", code="bad_audio") from None
    if data.size == 0:
        raise PluginError(f"the audio file holds no samples; expected {ACCEPTED}", code="bad_audio")
    return data.mean(axis=1), int(rate_hz)


def resample(audio: np.ndarray, from_hz: int, to_hz: int) -> np.ndarray:
    if from_hz == to_hz:
        return np.ascontiguousarray(audio, dtype=np.float32)
    import soxr

    return soxr.resample(audio, from_hz, to_hz, quality="HQ").astype(np.float32, copy=False)


def load_mono(payload: bytes | None, fmt: AudioFormat | None, rate_hz: int, max_s: float | None = None) -> np.ndarray:
    """Decode, check length and resample: what a speech model consumes."""
    audio, source_hz = decode(payload, fmt, max_s)
    return resample(audio, source_hz, rate_hz)


def to_pcm16(audio: np.ndarray) -> bytes:
    return (np.clip(audio, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()


def wav_bytes(audio: np.ndarray, rate_hz: int) -> bytes:
    import soundfile

    buf = io.BytesIO()
    soundfile.write(buf, audio, rate_hz, format="WAV", subtype="PCM_16")
    return buf.getvalue()
