"""The GPU optimisation toolkit: the precision a profile asks for, and TensorRT engines built once and cached.

A TensorRT engine is specific to the TensorRT version, the GPU (its name and
compute capability), the ONNX graph, the precision and the shape profile it was
built for: an engine built for any other combination either refuses to load or,
worse, loads and computes with tactics timed on other hardware. So each engine
file is named by a hash of all six, with a sidecar JSON holding the key and the
engine's own sha256. A missing, truncated or otherwise changed file, or a key
that no longer matches, is rebuilt; engines for the same graph under a stale
key are removed so the cache does not grow with every driver update.

The build's tactic timings go to a timing cache per TensorRT version and GPU,
shared by every graph: a rebuild after a graph or precision change then costs
seconds instead of minutes on the Orin Nano. Builds run inside a plugin's
`setup`, while the daemon sends systemd EXTEND_TIMEOUT_USEC (daemon.tell_systemd).

`tensorrt` is imported inside the functions that need it: JetPack brings it on
the Jetson; nowhere else can it be installed, and nothing else must pay for it.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

MIB = 1024 * 1024
Shape = tuple[int, ...]
ShapeProfile = dict[str, tuple[Shape, Shape, Shape]]
"""Input name -> (min, opt, max) shapes of one TensorRT optimisation profile."""


@dataclass(frozen=True)
class Precision:
    """What a profile asks of the GPU paths: compute dtype, FP32 islands in an FP16 engine, builder workspace."""

    name: str
    fp16: bool
    fp32_layers: tuple[str, ...]  # TensorRT LayerType names kept in FP32 inside an FP16 engine
    workspace_bytes: int
    tensorrt: bool = True  # False: GPU paths stay on torch (the TensorRT backends fall back)

    @property
    def torch_dtype(self) -> str:
        """The torch dtype name the CUDA paths run in (`getattr(torch, p.torch_dtype)`)."""
        return "float16" if self.fp16 else "float32"


PROFILE_PRECISIONS = {
    # a casualty is being treated: the fastest precision, memory second
    "emergency": Precision("fastest", fp16=True, fp32_layers=(), workspace_bytes=1024 * MIB),
    # the default: FP16, with the layers whose FP16 sums overflow or drift (LayerNorm, softmax) in FP32
    "field": Precision("balanced", fp16=True, fp32_layers=("NORMALIZATION", "SOFTMAX"), workspace_bytes=512 * MIB),
    # battery and memory first; the design documents ask for FP32 and no TensorRT here
    "training": Precision("economical", fp16=False, fp32_layers=(), workspace_bytes=256 * MIB, tensorrt=False),
}


def precision_for(profile: str) -> Precision:
    """The precision for a profile name: the three shipped profiles' own, and the balanced (field) one for a
    profile an operator added to the profiles directory (the daemon has already checked that it exists; failing
    here would only leave every model-loading worker in a restart loop)."""
    return PROFILE_PRECISIONS.get(profile, PROFILE_PRECISIONS["field"])


@dataclass(frozen=True)
class GpuDevice:
    name: str
    compute_capability: tuple[int, int]


def cuda_device(index: int = 0) -> GpuDevice:
    """The CUDA device an engine is built for, as torch sees it (torch is loaded wherever engines are)."""
    import torch

    return GpuDevice(torch.cuda.get_device_name(index), tuple(torch.cuda.get_device_capability(index)))


class EngineError(RuntimeError):
    """An engine could not be built or loaded; the message says which step failed and why."""


@dataclass(frozen=True)
class EngineFile:
    path: Path
    plan: bytes
    built: bool  # False: read from the cache
    build_s: float | None
    timing_cache_entries_reused: bool  # a timing cache from an earlier build was loaded


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def engine_key(trt_version: str, device: GpuDevice, onnx_sha256: str, precision: Precision,
               shapes: ShapeProfile) -> dict[str, Any]:
    """Everything an engine depends on, as plain JSON values (stored beside the engine, hashed into its name)."""
    key = {"tensorrt": trt_version, "gpu": device.name, "compute_capability": list(device.compute_capability),
            "onnx_sha256": onnx_sha256, "precision": asdict(precision),
            "shapes": {name: [list(s) for s in triple] for name, triple in sorted(shapes.items())}}
    return json.loads(json.dumps(key))  # tuples become lists: equal to the key read back from the sidecar


def _key_digest(key: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def build_engine(onnx: Path, shapes: ShapeProfile, precision: Precision, cache_dir: Path, *, name: str,
                 device: GpuDevice | None = None, rebuild: bool = False, log: Any = None) -> EngineFile:
    """The serialized engine for this graph, shapes and precision: from the cache when its key and bytes match,
    else built (with the shared timing cache) and stored. `rebuild` ignores a cached file (it failed to load)."""
    import tensorrt as trt

    device = device or cuda_device()
    cache_dir = Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    key = engine_key(trt.__version__, device, file_sha256(onnx), precision, shapes)
    path = cache_dir / f"{name}-{_key_digest(key)}.engine"
    sidecar = path.with_suffix(".json")
    if not rebuild:
        cached = _read_cached(path, sidecar, key)
        if cached is not None:
            return EngineFile(path, cached, built=False, build_s=None, timing_cache_entries_reused=False)
    hardware = {k: key[k] for k in ("tensorrt", "gpu", "compute_capability")}
    timing_path = cache_dir / f"timing-{_key_digest(hardware)}.cache"
    started = time.perf_counter()
    plan, reused = _build(trt, onnx, shapes, precision, timing_path, log)
    build_s = time.perf_counter() - started
    _remove_stale(cache_dir, name, keep=path)
    _write_atomic(path, plan)
    _write_atomic(sidecar, json.dumps({"key": key, "sha256": hashlib.sha256(plan).hexdigest(),
                                       "build_s": round(build_s, 3)}, indent=1).encode())
    if log is not None:
        log.info("tensorrt engine built", engine=str(path), build_s=round(build_s, 1), timing_cache_reused=reused)
    return EngineFile(path, plan, built=True, build_s=build_s, timing_cache_entries_reused=reused)


def _read_cached(path: Path, sidecar: Path, key: dict[str, Any]) -> bytes | None:
    """The cached plan if its sidecar names this key and its bytes hash to what was written; else None."""
    try:
        meta = json.loads(sidecar.read_text())
        plan = path.read_bytes()
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or meta.get("key") != key or meta.get("sha256") != hashlib.sha256(plan).hexdigest():
        return None
    return plan


def _remove_stale(cache_dir: Path, name: str, keep: Path) -> None:
    for old in cache_dir.glob(f"{name}-*.engine"):
        if old != keep:
            old.unlink(missing_ok=True)
            old.with_suffix(".json").unlink(missing_ok=True)


def _build(trt: Any, onnx: Path, shapes: ShapeProfile, precision: Precision, timing_path: Path,
           log: Any) -> tuple[bytes, bool]:
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    network = builder.create_network(0)  # TensorRT 10: explicit batch is the only mode
    parser = trt.OnnxParser(network, logger)
    if not parser.parse(Path(onnx).read_bytes()):
        errors = "; ".join(str(parser.get_error(i)) for i in range(parser.num_errors))
        raise EngineError(f"TensorRT could not parse {onnx}: {errors or 'no detail given'}")
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, precision.workspace_bytes)
    if precision.fp16:
        if not hasattr(trt.BuilderFlag, "FP16"):
            raise EngineError(f"TensorRT {trt.__version__} has no FP16 builder flag (strongly typed networks "
                              "only); an FP16 engine needs an FP16 ONNX graph there")
        config.set_flag(trt.BuilderFlag.FP16)
        if _keep_fp32(trt, network, precision.fp32_layers):
            config.set_flag(trt.BuilderFlag.OBEY_PRECISION_CONSTRAINTS)
    profile = builder.create_optimization_profile()
    for input_name, (low, opt, high) in shapes.items():
        profile.set_shape(input_name, low, opt, high)
    config.add_optimization_profile(profile)
    timing_cache, reused = _timing_cache(config, timing_path, log)
    config.set_timing_cache(timing_cache, False)
    plan = builder.build_serialized_network(network, config)
    if plan is None:
        raise EngineError(f"TensorRT failed to build an engine from {onnx} (see the TensorRT warnings above)")
    _write_atomic(timing_path, bytes(config.get_timing_cache().serialize()))
    return bytes(plan), reused


def _keep_fp32(trt: Any, network: Any, layer_types: tuple[str, ...]) -> int:
    """Pin layers of these types to FP32 compute and outputs; returns how many were pinned."""
    wanted = {getattr(trt.LayerType, t) for t in layer_types}
    pinned = 0
    for i in range(network.num_layers):
        layer = network.get_layer(i)
        if layer.type not in wanted:
            continue
        layer.precision = trt.float32
        for output in range(layer.num_outputs):  # an FP32 layer's FP16 output would overflow all the same
            layer.set_output_type(output, trt.float32)
        pinned += 1
    return pinned


def _timing_cache(config: Any, path: Path, log: Any) -> tuple[Any, bool]:
    """The timing cache from disk; an unreadable or rejected file starts an empty one (it only costs time)."""
    try:
        data = path.read_bytes()
    except OSError:
        data = b""
    if data:
        try:
            return config.create_timing_cache(data), True
        except Exception as error:  # noqa: BLE001 - TensorRT raises its own types for a bad cache
            if log is not None:
                log.warning("tensorrt timing cache unreadable; starting an empty one", path=str(path), error=str(error))
    return config.create_timing_cache(b""), False


@dataclass
class LoadedEngine:
    runtime: Any  # must outlive the engine
    engine: Any
    file: EngineFile


def load_engine(onnx: Path, shapes: ShapeProfile, precision: Precision, cache_dir: Path, *, name: str,
                device: GpuDevice | None = None, log: Any = None) -> LoadedEngine:
    """A deserialized engine; a cached plan TensorRT rejects (driver update, damage the hash missed) is rebuilt
    once, and a fresh plan it rejects is an EngineError."""
    import tensorrt as trt

    runtime = trt.Runtime(trt.Logger(trt.Logger.WARNING))
    file = build_engine(onnx, shapes, precision, cache_dir, name=name, device=device, log=log)
    engine = _deserialize(runtime, file.plan)
    if engine is None and not file.built:
        if log is not None:
            log.warning("cached tensorrt engine rejected; rebuilding", engine=str(file.path))
        file = build_engine(onnx, shapes, precision, cache_dir, name=name, device=device, rebuild=True, log=log)
        engine = _deserialize(runtime, file.plan)
    if engine is None:
        raise EngineError(f"TensorRT could not deserialize the engine it just built ({file.path})")
    return LoadedEngine(runtime, engine, file)


def _deserialize(runtime: Any, plan: bytes) -> Any:
    """The engine, or None where TensorRT rejects the plan (it returns None or raises, by version)."""
    try:
        return runtime.deserialize_cuda_engine(plan)
    except Exception:  # noqa: BLE001 - a rejected plan is answered by a rebuild, whatever TensorRT raised
        return None
