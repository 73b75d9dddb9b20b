"""The decoder on ONNX Runtime: the same numbers and tokens as the torch decoder it was exported from, no torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile
import torch

from tcccd.plugins.whisper.engine.convert import read_model_source
from tcccd.plugins.whisper.engine.encoders import BackendUnavailable, TorchDecoderEngine
from tcccd.plugins.whisper.engine.model import build_model
from tcccd.plugins.whisper.engine.onnx_decoder import DecoderFiles, OnnxEngine, OnnxSteps, quantize_rows
from tcccd.plugins.whisper.engine.quantize import quantize_decoder
from tcccd.plugins.whisper.engine.torch_steps import TorchSteps
from tcccd.plugins.whisper.engine.transcriber import DecodeOptions, Transcriber
from tests.plugins.whisper.conftest import ROOT

ESPEAK = ROOT / "tests" / "data" / "espeak-samples"


@pytest.fixture(scope="module")
def torch_decoder():
    """The int8-projection torch decoder the graphs were exported from (the onnxruntime backend's decoder until
    the export), on one thread as the transcriber ran it."""
    torch.set_num_threads(1)
    source = read_model_source(None)
    whisper = build_model(source.dims, source.state, with_encoder=False, fp16_embedding=True)
    return quantize_decoder(whisper.decoder)


@pytest.fixture(scope="module")
def torch_twin(onnx_transcriber, torch_decoder):
    """The same ONNX encoder feeding the torch decoder: what the onnxruntime backend ran before."""
    t = onnx_transcriber
    engine = TorchDecoderEngine(t.engine.encoder, torch_decoder, t.tokenizer)
    twin = Transcriber(t.tokenizer, engine, None, t.n_text_ctx, t.suppress, "onnxruntime")
    twin.n_mels = t.n_mels
    return twin


def test_default_cpu_load_runs_both_halves_on_onnxruntime(onnx_transcriber):
    assert isinstance(onnx_transcriber.engine, OnnxEngine)
    assert onnx_transcriber.backend == "onnxruntime" and not onnx_transcriber.fallbacks


@pytest.mark.parametrize("rows", [1, 2, 5])
def test_int8_projection_is_bit_for_bit_fbgemm(onnx_transcriber, torch_decoder, rows):
    rng = np.random.default_rng(rows)
    steps = onnx_transcriber.engine.steps
    for spread in (0.05, 1.0, 20.0):
        hidden = (rng.standard_normal((rows, 384)) * spread + rng.normal(0, spread)).astype(np.float32)
        with torch.inference_mode():
            expected = torch_decoder.projection(torch.from_numpy(hidden)).numpy()
        assert np.array_equal(steps._logits(hidden), expected)


@pytest.mark.parametrize("offset", [-3.0, 0.0, 0.4, 5.0])
def test_activations_get_torchs_7_bit_scale_and_zero_point(offset):
    x = (np.random.default_rng(7).standard_normal((5, 384)) + offset).astype(np.float32)
    values, zero, scale = quantize_rows(x)
    expected = torch.quantize_per_tensor_dynamic(torch.from_numpy(x), torch.quint8, reduce_range=True)
    assert (int(zero), float(scale)) == (expected.q_zero_point(), np.float32(expected.q_scale()))
    assert np.abs(values.astype(int) - expected.int_repr().numpy().astype(int)).max() <= 1  # rounding ties
    assert values.max() <= 128  # 7 bits (+1 at the top): u8 x s8 pairs never saturate MLAS' int16 sums


def test_steps_follow_the_torch_decoder(onnx_transcriber, torch_decoder):
    onnx_steps, torch_steps = onnx_transcriber.engine.steps, TorchSteps(torch_decoder)
    features = np.random.default_rng(0).standard_normal((1, 300, 384)).astype(np.float32)
    with torch.inference_mode():
        torch_audio = torch_decoder.cross_kv(torch.from_numpy(features))
    onnx_audio = onnx_steps.cross(features)
    tok = onnx_transcriber.tokenizer
    start = [tok.sot, tok.encode(" Tourniquet")[0]]
    ours, our_cache = onnx_steps.begin(onnx_audio, start, [0, 1])
    theirs, their_cache = torch_steps.begin(torch_audio, start, [0, 1])
    our_cache, their_cache = onnx_steps.expand(our_cache, 3), torch_steps.expand(their_cache, 3)
    tokens = np.array(tok.encode(" applied at nine"), np.int64)
    for _ in range(4):
        assert np.abs(ours - theirs).max() < 1e-3 and (ours.argmax(-1) == theirs.argmax(-1)).all()
        ours, our_cache = onnx_steps.advance(onnx_audio, our_cache, tokens)
        theirs, their_cache = torch_steps.advance(torch_audio, their_cache, tokens)
        rows = np.array([2, 0, 0])  # beam reordering, a hypothesis taken twice
        our_cache, their_cache = onnx_steps.select(our_cache, rows), torch_steps.select(their_cache, rows)
        tokens = theirs.argmax(-1).astype(np.int64)[rows]


@pytest.mark.parametrize("beam_size", [1, 5])
def test_bundled_samples_give_the_tokens_the_torch_decoder_gave(onnx_transcriber, torch_twin, beam_size):
    options = DecodeOptions(beam_size=beam_size)
    for path in sorted(ESPEAK.glob("*.wav")):
        audio = _mono_16k(path)
        ours = onnx_transcriber.transcribe(audio, options)
        theirs = torch_twin.transcribe(audio, options)
        assert [s.tokens for s in ours.segments] == [s.tokens for s in theirs.segments], path.name
        assert ours.segments[0].avg_logprob == pytest.approx(theirs.segments[0].avg_logprob, abs=1e-4)


def _mono_16k(path: Path) -> np.ndarray:
    import soxr

    audio, rate_hz = soundfile.read(path, dtype="float32")
    audio = audio.mean(axis=1) if audio.ndim > 1 else audio
    return soxr.resample(audio, rate_hz, 16000).astype(np.float32) if rate_hz != 16000 else audio


def test_a_worker_with_the_cache_never_imports_torch(onnx_transcriber, onnx_cache):
    code = ("import sys, soundfile\n"
            "from tcccd.plugins.whisper.engine.transcriber import DecodeOptions, Transcriber\n"
            "from tcccd.plugins.whisper.stage.vad import SpeechDetector\n"
            f"t = Transcriber.load(None, backend='onnxruntime', cache_dir={str(onnx_cache)!r}, threads=1)\n"
            f"audio, _ = soundfile.read({str(ESPEAK / 'txa.wav')!r}, dtype='float32')\n"
            "SpeechDetector.load().speech_spans(audio)\n"
            "print(t.transcribe(audio, DecodeOptions(beam_size=5, temperatures=(0.0, 1.0))).text)\n"
            "assert 'torch' not in sys.modules, 'torch was imported'\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip()


def test_a_failed_export_falls_back_to_the_torch_decoder(tmp_path, monkeypatch, sentence_audio):
    """The child process is the outside world here: it may be killed or run out of disk."""
    from tcccd.plugins.whisper.engine import onnx_decoder

    def failed_export(model: object, cache_dir: Path) -> None:
        raise BackendUnavailable("the ONNX decoder export failed: No space left on device")

    monkeypatch.setattr(onnx_decoder, "export_in_child", failed_export)
    loaded = Transcriber.load(None, backend="onnxruntime", cache_dir=tmp_path, threads=2)
    assert isinstance(loaded.engine, TorchDecoderEngine) and loaded.backend == "onnxruntime"
    assert [f.skipped for f in loaded.fallbacks] == ["onnxruntime decoder"]
    assert "No space left" in loaded.fallbacks[0].reason
    assert loaded.transcribe(sentence_audio, DecodeOptions(beam_size=1)).text


def test_files_are_keyed_by_the_decoder_weights_and_the_alignment_heads(tmp_path):
    source = read_model_source(None)
    state, heads = source.state, source.alignment_heads
    assert heads == ((1, 0), (2, 0), (2, 5), (3, 0), (3, 1), (3, 2), (3, 3), (3, 4))  # tiny.en's config.json
    files = DecoderFiles.for_state(tmp_path, state, heads)
    changed = dict(state, **{"decoder.ln.bias": state["decoder.ln.bias"] + np.float16(1)})
    encoder_only = dict(state, **{"encoder.ln_post.bias": state["encoder.ln_post.bias"] + np.float16(1)})
    assert DecoderFiles.for_state(tmp_path, changed, heads).step != files.step
    assert DecoderFiles.for_state(tmp_path, encoder_only, heads) == files
    other_heads = DecoderFiles.for_state(tmp_path, state, heads[:4])
    assert other_heads.step != files.step and other_heads.proj == files.proj
    assert not files.cached()


def test_no_torch_module_is_kept_on_the_onnx_engine(onnx_transcriber):
    assert onnx_transcriber.model is None
    assert isinstance(onnx_transcriber.engine.steps, OnnxSteps)


def test_graphs_the_runtime_cannot_load_fall_back_to_torch_with_the_reason(tmp_path, sentence_audio):
    """An onnxruntime older than the onnx that exported the graphs refuses them ("Unsupported model IR version"):
    seen on a machine with onnx 1.23 and onnxruntime 1.30. Here the cached graphs say an IR version no runtime
    knows; the transcriber falls back to the next backend and says why, instead of crashing."""
    import onnx
    from onnx import TensorProto, helper

    from tcccd.plugins.whisper.engine.encoders import onnx_path

    source = read_model_source(None)
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    future = helper.make_model(graph, ir_version=99)
    files = DecoderFiles.for_state(tmp_path, source.state, source.alignment_heads)
    for path in (onnx_path(tmp_path, source.state, heads_apart=True), files.step, files.cross, files.proj):
        onnx.save(future, str(path))
    loaded = Transcriber.load(None, backend="onnxruntime", cache_dir=tmp_path, threads=2, fallback_backends=("torch",))
    assert loaded.backend == "torch"
    assert loaded.fallbacks and all(f.skipped.startswith("onnxruntime") for f in loaded.fallbacks)
    assert all("cannot load whisper-" in f.reason and "IR version" in f.reason for f in loaded.fallbacks), \
        loaded.fallbacks
    assert loaded.transcribe(sentence_audio, DecodeOptions(beam_size=1)).text
