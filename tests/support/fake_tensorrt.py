"""A stand-in for the `tensorrt` module at the hardware boundary (TensorRT runs only on the Jetson).

It follows the TensorRT 10 Python API that daemon/accel.py calls, records every
call in `calls`, and "serializes" an engine as bytes that spell out what the
builder was told (flags, workspace, shapes, layers pinned to FP32), so tests can
check what a real build would have been asked for. A graph whose bytes hold
b"unparsable" fails to parse; a plan that does not start with PLAN_MAGIC is
rejected by `Runtime.deserialize_cuda_engine`, as TensorRT rejects a foreign
plan; a timing cache not starting with TIMING_MAGIC raises, as a corrupt one does.
"""

from __future__ import annotations

import importlib.machinery
import json
import types
from typing import Any

PLAN_MAGIC = b"FAKEPLAN"
TIMING_MAGIC = b"FAKETIMING"


def make_module(version: str = "10.3.0", layer_types: tuple[str, ...] = ("CONVOLUTION", "NORMALIZATION", "SOFTMAX"),
                has_fp16_flag: bool = True) -> types.ModuleType:
    trt = types.ModuleType("tensorrt")
    trt.__spec__ = importlib.machinery.ModuleSpec("tensorrt", None)  # torch's lazy imports probe find_spec
    trt.__version__ = version
    trt.calls = []
    trt.float32, trt.float16 = "float32", "float16"
    trt.Logger = type("Logger", (), {"WARNING": 2, "__init__": lambda self, severity=2: None})
    trt.MemoryPoolType = types.SimpleNamespace(WORKSPACE="WORKSPACE")
    flags = {"OBEY_PRECISION_CONSTRAINTS": "OBEY_PRECISION_CONSTRAINTS"}
    if has_fp16_flag:
        flags["FP16"] = "FP16"
    trt.BuilderFlag = types.SimpleNamespace(**flags)
    trt.LayerType = types.SimpleNamespace(**{t: t for t in ("CONVOLUTION", "NORMALIZATION", "SOFTMAX", "MATRIX")})

    class Layer:
        def __init__(self, layer_type: str) -> None:
            self.type = layer_type
            self.num_outputs = 1
            self.precision = None
            self.output_types: dict[int, str] = {}

        def set_output_type(self, index: int, dtype: str) -> None:
            self.output_types[index] = dtype

    class Network:
        def __init__(self) -> None:
            self.layers = [Layer(t) for t in layer_types]
            self.num_layers = len(self.layers)

        def get_layer(self, i: int) -> Layer:
            return self.layers[i]

    class OnnxParser:
        def __init__(self, network: Network, logger: Any) -> None:
            self.num_errors = 0

        def parse(self, data: bytes) -> bool:
            trt.calls.append(("parse", len(data)))
            if b"unparsable" in data:
                self.num_errors = 1
                return False
            return True

        def get_error(self, i: int) -> str:
            return "In node 0: unsupported operator"

    class TimingCache:
        def __init__(self, entries: list[str]) -> None:
            self.entries = entries

        def serialize(self) -> bytes:
            return TIMING_MAGIC + json.dumps(self.entries).encode()

    class Profile:
        def __init__(self) -> None:
            self.shapes: dict[str, list] = {}

        def set_shape(self, name: str, low: tuple, opt: tuple, high: tuple) -> None:
            self.shapes[name] = [list(low), list(opt), list(high)]

    class Config:
        def __init__(self) -> None:
            self.flags: list[str] = []
            self.pools: dict[str, int] = {}
            self.profiles: list[Profile] = []
            self.timing_cache: TimingCache | None = None

        def set_memory_pool_limit(self, pool: str, size: int) -> None:
            self.pools[pool] = size

        def set_flag(self, flag: str) -> None:
            self.flags.append(flag)

        def add_optimization_profile(self, profile: Profile) -> int:
            self.profiles.append(profile)
            return len(self.profiles) - 1

        def create_timing_cache(self, data: bytes) -> TimingCache:
            if not data:
                return TimingCache([])
            if not data.startswith(TIMING_MAGIC):
                raise RuntimeError("timing cache: invalid header")
            return TimingCache(json.loads(data[len(TIMING_MAGIC):]))

        def set_timing_cache(self, cache: TimingCache, ignore_mismatch: bool) -> bool:
            self.timing_cache = cache
            return True

        def get_timing_cache(self) -> TimingCache:
            return self.timing_cache

    class Builder:
        fail = False

        def __init__(self, logger: Any) -> None:
            pass

        def create_network(self, flags: int) -> Network:
            return Network()

        def create_builder_config(self) -> Config:
            return Config()

        def create_optimization_profile(self) -> Profile:
            return Profile()

        def build_serialized_network(self, network: Network, config: Config) -> bytes | None:
            cache = config.timing_cache
            trt.calls.append(("build", len(cache.entries)))
            if Builder.fail:
                return None
            cache.entries.append(f"tactics-{len(cache.entries)}")
            pinned = [layer.type for layer in network.layers  # compute and output both pinned
                      if layer.precision == trt.float32 and layer.output_types.get(0) == trt.float32]
            spec = {"flags": config.flags, "workspace": config.pools.get("WORKSPACE"),
                    "shapes": [p.shapes for p in config.profiles], "fp32_layers": pinned}
            return PLAN_MAGIC + json.dumps(spec).encode()

    class Engine:
        def __init__(self, spec: dict) -> None:
            self.spec = spec

    class Runtime:
        def __init__(self, logger: Any) -> None:
            pass

        def deserialize_cuda_engine(self, plan: bytes) -> Engine | None:
            trt.calls.append(("deserialize", len(plan)))
            if not bytes(plan).startswith(PLAN_MAGIC):
                return None
            return Engine(json.loads(bytes(plan)[len(PLAN_MAGIC):]))

    trt.Builder, trt.OnnxParser, trt.Runtime = Builder, OnnxParser, Runtime
    return trt


def plan_spec(plan: bytes) -> dict:
    """What the builder was asked for, from a plan the stand-in wrote."""
    return json.loads(plan[len(PLAN_MAGIC):])
