"""The daemon's one YAML config: schema, loading, profile overlays and validation.

A config is valid only if every stage's plugin can be found and its parameters,
with the active profile laid over them, pass that plugin's own schema. That is
checked at start and by `tcccd config check`, so a typo never surfaces as a
worker crash-looping at 3 a.m.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tcccd.kit import registry
from tcccd.memory.budget import BudgetOverride, MemorySettings
from tcccd.record.journal import JournalSettings
from tcccd.tak_settings import TakSettings
from tcccd.telemetry.nvpmodel import MODE_NAME
from tcccd.telemetry.settings import TelemetrySettings
from tcccd.wire.validation import format_validation_error
from tcccd.wyoming_door.settings import WyomingSettings

STAGE_NAME = r"^[a-z][a-z0-9_-]{0,31}$"


class ConfigError(ValueError):
    """A config that cannot be used; `problems` holds one line per fault."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("\n".join(f"{source}: {p}" for p in problems))


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RestartPolicy(Strict):
    max_restarts: int = Field(5, ge=0, description="restarts allowed within window_s before the stage is failed")
    window_s: float = Field(300.0, gt=0)
    backoff_initial_s: float = Field(0.5, gt=0)
    backoff_max_s: float = Field(30.0, gt=0)
    failed_retry_initial_s: float = Field(30.0, gt=0, description="first retry after the budget is spent")
    failed_retry_max_s: float = Field(600.0, gt=0, description="cap of the doubling retry of a failed stage")


class StageConfig(Strict):
    name: str = Field(pattern=STAGE_NAME)
    plugin: str = Field(min_length=1)
    worker: str | None = Field(None, pattern=STAGE_NAME, description="stages naming one worker share a process")
    enabled: bool = True
    params: dict[str, Any] = Field(default_factory=dict)
    max_queue: int = Field(16, ge=1, description="messages in flight to this stage before senders get 'busy'")
    start_timeout_s: float = Field(300.0, gt=0)
    # A worker is killed when its heartbeat thread is silent this long (frozen), or when it is still busy this
    # long after a request's deadline (hung). 15 s < the unit's WatchdogSec=30, so the supervisor replaces a
    # frozen worker before systemd would restart the whole daemon.
    hang_timeout_s: float = Field(15.0, gt=0, description="frozen or past-deadline time before a worker is killed")
    restart: RestartPolicy = Field(default_factory=RestartPolicy)
    threads: int | None = Field(None, ge=1, le=64, description="compute threads of this stage's worker (torch, "
                                "ONNX Runtime, OpenMP); default: the cores shared out among the workers")
    cpus: list[int] | None = Field(None, min_length=1, description="pin this stage's worker to these CPU numbers")

    @property
    def worker_name(self) -> str:
        return self.worker or self.name


def _default_dir(env: str, xdg: str, fallback: str, leaf: str) -> Path:
    """systemd's *_DIRECTORY wins, then XDG, then a per-user fallback."""
    if os.environ.get(env):
        return Path(os.environ[env].split(":")[0])
    if os.environ.get(xdg):
        return Path(os.environ[xdg]) / "tcccd" / leaf
    return Path(fallback).expanduser() / leaf


class DaemonSection(Strict):
    client_endpoint: str = Field("tcp://127.0.0.1:7781", pattern=r"^(tcp|ipc)://")
    events_endpoint: str = Field("tcp://127.0.0.1:7782", pattern=r"^(tcp|ipc)://")
    runtime_dir: Path = Field(default_factory=lambda: _default_dir(
        "RUNTIME_DIRECTORY", "XDG_RUNTIME_DIR", f"/tmp/tcccd-{os.getuid()}", "run"))
    state_dir: Path = Field(default_factory=lambda: _default_dir(
        "STATE_DIRECTORY", "XDG_STATE_HOME", "~/.local/state/tcccd", "state"))
    cache_dir: Path = Field(default_factory=lambda: _default_dir(
        "CACHE_DIRECTORY", "XDG_CACHE_HOME", "~/.cache/tcccd", "cache"))
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    log_format: Literal["auto", "json", "console"] = "auto"
    heartbeat_interval_s: float = Field(1.0, gt=0)
    default_deadline_s: float = Field(120.0, gt=0)
    drain_timeout_s: float = Field(10.0, gt=0)
    max_request_bytes: int = Field(64 * 1024 * 1024, ge=1024)
    stream_idle_timeout_s: float = Field(30.0, gt=0, description="a stream with no chunk this long is ended")
    max_open_requests: int = Field(256, ge=1, description="open requests of all clients before 'busy'")
    max_open_requests_per_client: int = Field(64, ge=1)
    max_open_streams: int = Field(16, ge=1, description="open multi-message requests (live streams) in total")
    max_open_streams_per_client: int = Field(4, ge=1)
    curve_secret_key_file: Path | None = Field(None, description="server key pair (`tcccd keys generate`); "
                                               "required to bind a non-loopback endpoint")
    curve_authorized_dir: Path | None = Field(None, description="public keys (*.key) of the clients let in")
    host_root: Path | None = Field(None, description="where the host's / is for reading proc and sys (tests, "
                                                     "containers); $TCCCD_HOST_ROOT wins; default /")
    memory: MemorySettings = Field(default_factory=MemorySettings, description="the memory budget and its capper")
    telemetry: TelemetrySettings = Field(default_factory=TelemetrySettings,
                                         description="battery/thermal readings that cap the profile")


class CardSettings(Strict):
    """`card:` in the config: the casualty card's daemon side."""

    readback_sources: list[Literal["mic", "client", "wyoming"]] = Field(
        ["mic"], description="read back entries from transcripts of these sources: the kit's own microphone by "
                             "default; files sent through `transcribe` (client) and Wyoming go on the card silently")


class Config(Strict):
    daemon: DaemonSection = Field(default_factory=DaemonSection)
    profile: str = Field("field", min_length=1)
    profiles_dir: Path | None = Field(None, description="defaults to the profiles shipped in the package")
    pipeline: list[StageConfig] = Field(default_factory=list)
    routes: dict[str, list[str]] = Field(default_factory=dict, description="request type -> chain of stages")
    transcripts: JournalSettings = Field(default_factory=JournalSettings, description="the transcript journal")
    wyoming: WyomingSettings = Field(default_factory=WyomingSettings, description="the Wyoming front door")
    tak: TakSettings = Field(default_factory=TakSettings, description="the team's TAK network (docs/tak.md)")
    card: CardSettings = Field(default_factory=CardSettings, description="the casualty card")

    @model_validator(mode="after")
    def _names_agree(self) -> Config:
        names = [s.name for s in self.pipeline]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"stage names must be unique, repeated: {', '.join(dupes)}")
        for kind, chain in self.routes.items():
            unknown = [s for s in chain if s not in names]
            if unknown or not chain:
                raise ValueError(f"routes.{kind} names stages {unknown or chain} that are not in pipeline "
                                 f"(stages: {', '.join(names) or 'none'})")
        return self

    def stage(self, name: str) -> StageConfig:
        return next(s for s in self.pipeline if s.name == name)

    @property
    def enabled_stages(self) -> list[StageConfig]:
        return [s for s in self.pipeline if s.enabled]


def _read_yaml(path: Path | str, text: str | None = None) -> Any:
    try:
        raw = text if text is not None else Path(path).read_text()
    except OSError as exc:
        raise ConfigError(str(path), [f"cannot read: {exc.strerror}"]) from None
    try:
        return yaml.safe_load(raw) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(str(path), [f"not valid YAML: {exc}"]) from None


def default_config_text() -> str:
    return resources.files("tcccd").joinpath("default.yaml").read_text()


def profile_path(config: Config, name: str) -> Path:
    base = config.profiles_dir or Path(str(resources.files("tcccd.profiles")))
    return base / f"{name}.yaml"


def available_profiles(config: Config) -> list[str]:
    base = profile_path(config, "x").parent
    return sorted(p.stem for p in base.glob("*.yaml"))


class ProfileFile(Strict):
    description: str = ""
    plugins: dict[str, dict[str, Any]] = Field(default_factory=dict, description="plugin name -> parameter overlay")
    memory: BudgetOverride | None = Field(None, description="this profile's memory budget (daemon.memory otherwise)")
    power_mode: str | None = Field(None, pattern=MODE_NAME.pattern, description="nvpmodel mode by name (15W, "
                                   "MAXN_SUPER, ...), looked up in /etc/nvpmodel.conf; ignored off a Jetson")
    readback: bool = Field(True, description="read each casualty card entry back on the kit's speaker once it is "
                                             "logged (routes.speak.play)")


def load_profile(config: Config, name: str) -> ProfileFile:
    path = profile_path(config, name)
    if not path.is_file():
        raise ConfigError(str(path), [f"profile {name!r} not found (available: "
                                      f"{', '.join(available_profiles(config)) or 'none'})"])
    raw = _read_yaml(path)
    try:
        return ProfileFile.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(str(path), format_validation_error(ProfileFile, exc)) from None


def stage_params(config: Config, stage: StageConfig, profile: ProfileFile) -> dict[str, Any]:
    """A stage's parameters with the profile's overlay for its plugin laid over them."""
    plugin_cls = registry.load(stage.plugin)
    overlay = profile.plugins.get(plugin_cls.name, {})
    return {**stage.params, **overlay}


def validate_stages(config: Config, profile: ProfileFile, profile_name: str) -> list[str]:
    """Problems with plugins and parameters, one line each, empty when all is well."""
    problems: list[str] = []
    for index, stage in enumerate(config.pipeline):
        if not stage.enabled:
            continue
        try:
            plugin_cls = registry.load(stage.plugin)
        except registry.PluginNotFound as exc:
            problems.append(f"pipeline[{index}].plugin: {exc}")
            continue
        try:
            plugin_cls.validate_params(stage.params)
        except ValidationError as exc:
            problems += format_validation_error(plugin_cls.Params, exc, f"pipeline[{index}].params")
            continue
        try:
            plugin_cls.validate_params(stage_params(config, stage, profile))
        except ValidationError as exc:
            problems += format_validation_error(plugin_cls.Params, exc,
                                                f"profile {profile_name!r}: plugins.{plugin_cls.name}")
    return problems


def parse(raw: Any, source: str) -> Config:
    if not isinstance(raw, dict):
        raise ConfigError(source, [f"expected a mapping at the top level, got {type(raw).__name__}"])
    try:
        config = Config.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(source, format_validation_error(Config, exc)) from None
    profile = load_profile(config, config.profile)
    problems = validate_stages(config, profile, config.profile)
    if problems:
        raise ConfigError(source, problems)
    return config


def load(path: Path | str | None = None) -> Config:
    """The config at `path`, or the embedded default when no path is given."""
    if path is None:
        return parse(_read_yaml("<embedded default>", default_config_text()), "<embedded default>")
    return parse(_read_yaml(path), str(path))


class RunningConfig:
    """The config in force: parts read it through `current()` (tcccd.ports.ConfigSource); a reload replaces it."""

    def __init__(self, config: Config) -> None:
        self._config = config

    def current(self) -> Config:
        return self._config

    def replace(self, config: Config) -> None:
        self._config = config
