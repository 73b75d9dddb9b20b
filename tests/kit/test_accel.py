"""The engine cache: what a build is asked for, when a cached engine is reused and when it is rebuilt.

TensorRT itself cannot run here, so `tensorrt` is the stand-in of tests/support/fake_tensorrt.py (the hardware
boundary); everything above it, the key, the files, the timing cache, the rebuilds, is tcccd's real code.
"""

from __future__ import annotations

import json
import sys

import pytest

from tcccd.kit.accel import EngineError, GpuDevice, build_engine, load_engine, precision_for
from tests.support.fake_tensorrt import TIMING_MAGIC, make_module, plan_spec

ORIN = GpuDevice("Orin", (8, 7))
SHAPES = {"mel": ((1, 80, 100), (1, 80, 3000), (1, 80, 3000))}


@pytest.fixture
def trt(monkeypatch):
    module = make_module()
    monkeypatch.setitem(sys.modules, "tensorrt", module)
    return module


@pytest.fixture
def onnx(tmp_path):
    path = tmp_path / "graph.onnx"
    path.write_bytes(b"graph v1")
    return path


def build(onnx, cache, precision="field", **kw):
    return build_engine(onnx, kw.pop("shapes", SHAPES), precision_for(precision), cache, name="enc",
                        device=kw.pop("device", ORIN), **kw)


def builds(trt):
    return [c for c in trt.calls if c[0] == "build"]


def test_profiles_choose_precision():
    assert precision_for("emergency").fp16 and not precision_for("emergency").fp32_layers
    assert precision_for("field").fp16 and set(precision_for("field").fp32_layers) == {"NORMALIZATION", "SOFTMAX"}
    assert not precision_for("training").fp16 and precision_for("training").torch_dtype == "float32"
    assert not precision_for("training").tensorrt and precision_for("emergency").tensorrt
    assert precision_for("an operator's own profile") == precision_for("field")


def test_build_asks_for_fp16_shapes_workspace_and_fp32_islands(trt, onnx, tmp_path):
    result = build(onnx, tmp_path / "cache")
    spec = plan_spec(result.plan)
    assert result.built and "FP16" in spec["flags"] and "OBEY_PRECISION_CONSTRAINTS" in spec["flags"]
    assert spec["fp32_layers"] == ["NORMALIZATION", "SOFTMAX"]
    assert spec["shapes"] == [{"mel": [[1, 80, 100], [1, 80, 3000], [1, 80, 3000]]}]
    assert spec["workspace"] == precision_for("field").workspace_bytes


def test_fastest_and_economical_precisions(trt, onnx, tmp_path):
    fastest = plan_spec(build(onnx, tmp_path / "a", "emergency").plan)
    assert fastest["flags"] == ["FP16"] and fastest["fp32_layers"] == []
    economical = plan_spec(build(onnx, tmp_path / "b", "training").plan)
    assert economical["flags"] == [] and economical["workspace"] < fastest["workspace"]


def test_second_load_reads_the_cache(trt, onnx, tmp_path):
    first = build(onnx, tmp_path)
    again = build(onnx, tmp_path)
    assert not again.built and again.plan == first.plan and again.path == first.path
    assert len(builds(trt)) == 1


@pytest.mark.parametrize("change", ["onnx", "precision", "shapes", "gpu", "capability", "tensorrt"])
def test_any_key_change_rebuilds_and_drops_the_stale_engine(trt, onnx, tmp_path, change):
    first = build(onnx, tmp_path)
    kw = {}
    if change == "onnx":
        onnx.write_bytes(b"graph v2")
    elif change == "shapes":
        kw["shapes"] = {"mel": ((1, 80, 200), (1, 80, 3000), (1, 80, 3000))}
    elif change == "gpu":
        kw["device"] = GpuDevice("NVIDIA H100 80GB HBM3", (8, 7))
    elif change == "capability":
        kw["device"] = GpuDevice("Orin", (8, 6))
    elif change == "tensorrt":
        trt.__version__ = "10.4.0"
    second = build(onnx, tmp_path, "emergency" if change == "precision" else "field", **kw)
    assert second.built and second.path != first.path
    assert not first.path.exists() and list(tmp_path.glob("enc-*.engine")) == [second.path]


@pytest.mark.parametrize("damage", ["truncate", "flip", "delete_sidecar", "garbage_sidecar"])
def test_damaged_cache_rebuilds(trt, onnx, tmp_path, damage):
    first = build(onnx, tmp_path)
    sidecar = first.path.with_suffix(".json")
    if damage == "truncate":
        first.path.write_bytes(first.plan[:10])
    elif damage == "flip":
        first.path.write_bytes(first.plan[:-1] + bytes([first.plan[-1] ^ 1]))
    elif damage == "delete_sidecar":
        sidecar.unlink()
    else:
        sidecar.write_text("{not json")
    again = build(onnx, tmp_path)
    assert again.built and again.plan == first.plan
    assert json.loads(sidecar.read_text())["key"]["onnx_sha256"]


def test_timing_cache_is_kept_and_reused_across_graphs(trt, onnx, tmp_path):
    cold = build(onnx, tmp_path)
    assert not cold.timing_cache_entries_reused
    onnx.write_bytes(b"graph v2")
    warm = build(onnx, tmp_path)
    assert warm.timing_cache_entries_reused
    assert [c[1] for c in builds(trt)] == [0, 1]  # the second build started with the first one's timings


def test_corrupt_timing_cache_starts_empty(trt, onnx, tmp_path):
    build(onnx, tmp_path)
    (timing,) = tmp_path.glob("timing-*.cache")
    timing.write_bytes(b"\x00garbage")
    onnx.write_bytes(b"graph v2")
    result = build(onnx, tmp_path)
    assert result.built and not result.timing_cache_entries_reused
    assert timing.read_bytes().startswith(TIMING_MAGIC)


def test_parse_and_build_failures_are_clear_errors(trt, onnx, tmp_path):
    onnx.write_bytes(b"unparsable graph")
    with pytest.raises(EngineError, match="could not parse .*unsupported operator"):
        build(onnx, tmp_path)
    onnx.write_bytes(b"graph")
    trt.Builder.fail = True
    with pytest.raises(EngineError, match="failed to build"):
        build(onnx, tmp_path)
    assert not list(tmp_path.glob("*.engine"))


def test_tensorrt_without_fp16_flag_refuses_an_fp16_build(monkeypatch, onnx, tmp_path):
    monkeypatch.setitem(sys.modules, "tensorrt", make_module(version="11.0.0", has_fp16_flag=False))
    with pytest.raises(EngineError, match="no FP16 builder flag"):
        build(onnx, tmp_path)
    assert build(onnx, tmp_path, "training").built  # FP32 needs no flag


def test_load_engine_rebuilds_a_plan_tensorrt_rejects(trt, onnx, tmp_path):
    first = build(onnx, tmp_path)
    foreign = b"NOT-A-PLAN from another TensorRT"
    first.path.write_bytes(foreign)  # passes our hash check once the sidecar agrees: only TensorRT can tell
    meta = json.loads(first.path.with_suffix(".json").read_text())
    import hashlib

    meta["sha256"] = hashlib.sha256(foreign).hexdigest()
    first.path.with_suffix(".json").write_text(json.dumps(meta))
    loaded = load_engine(onnx, SHAPES, precision_for("field"), tmp_path, name="enc", device=ORIN)
    assert loaded.file.built and loaded.engine.spec["flags"][0] == "FP16"
    assert [c[0] for c in trt.calls].count("deserialize") == 2
