"""Every enabled stage and the worker that hosts it, with the counters the broker and status read.

Built from the config (and rebuilt by a reload) by the supervisor, which alone
starts and stops the processes behind it. The broker, admission and the source
router ask here where a stage's messages go and whether its queue is full; they
change its counters (queued, acknowledged, dropped, refused) only through these
methods, so each counter has one place that says what it counts.
"""

from __future__ import annotations

from typing import Any

from tcccd.config import Config, StageConfig
from tcccd.core.workers import StageRuntime, WorkerHandle
from tcccd.wire.control import Snapshot
from tcccd.wire.status import PluginHealth, read_plugin_health


class Roster:
    def __init__(self, config: Config, params: dict[str, dict[str, Any]]) -> None:
        self._stages: dict[str, StageRuntime] = {}
        self._workers: dict[str, WorkerHandle] = {}
        self._worker_by_stage: dict[str, WorkerHandle] = {}
        self.build(config, params)

    def build(self, config: Config, params: dict[str, dict[str, Any]]) -> dict[str, WorkerHandle]:
        """Fresh records for `config`'s enabled stages, grouped by worker; returns the previous workers."""
        old = self._workers
        groups: dict[str, list[StageRuntime]] = {}
        for stage in config.enabled_stages:
            groups.setdefault(stage.worker_name, []).append(StageRuntime(stage, params[stage.name]))
        self.use({name: WorkerHandle(name, stages) for name, stages in groups.items()})
        return old

    def use(self, workers: dict[str, WorkerHandle]) -> None:
        """These worker records (a reload keeps a running one's record instead of a fresh one)."""
        self._workers = workers
        self._stages = {s.config.name: s for w in workers.values() for s in w.stages}
        self._worker_by_stage = {s.config.name: w for w in workers.values() for s in w.stages}

    # -- reading -----------------------------------------------------------------------------------------------

    def workers(self) -> dict[str, WorkerHandle]:
        return dict(self._workers)

    def handles(self) -> list[WorkerHandle]:
        """Every worker's record, for reading (its state, process, stages)."""
        return list(self._workers.values())

    def handle(self, worker: str) -> WorkerHandle:
        return self._workers[worker]

    def worker_of(self, stage: str) -> WorkerHandle:
        return self._worker_by_stage[stage]

    def has_stage(self, stage: str) -> bool:
        return stage in self._stages

    def by_identity(self, identity: bytes) -> WorkerHandle | None:
        """The worker whose current generation sends as `identity` (WorkerHandle.identity); None for a replaced
        generation's or another daemon's."""
        name = identity.decode(errors="replace").rpartition(":")[0]
        handle = self._workers.get(name)
        return handle if handle is not None and handle.identity == identity else None

    def stage_health(self) -> dict[str, PluginHealth]:
        """Each stage's plugin health as its worker last reported it, as its plugin's model."""
        return {name: stage.health for name, stage in self._stages.items()}

    def stage_params(self) -> dict[str, dict[str, Any]]:
        """The parameters each stage runs with (committed by the last accepted profile switch)."""
        return {name: stage.params for name, stage in self._stages.items()}

    def stage_configs(self) -> list[StageConfig]:
        return [stage.config for stage in self._stages.values()]

    def queue_full(self, stage: str) -> bool:
        return self._stages[stage].queue_full

    # -- counting ----------------------------------------------------------------------------------------------

    def queued(self, stage: str) -> None:
        self._stages[stage].pending += 1

    def acknowledged(self, stage: str | None) -> None:
        """The worker took a message of `stage` off its queue."""
        runtime = self._stages.get(stage or "")
        if runtime is not None:
            runtime.pending = max(0, runtime.pending - 1)

    def note_error(self, stage: str, text: str | None) -> None:
        """The last error a stage's request ended with, for status."""
        if stage in self._stages:
            self._stages[stage].last_error = text

    def count_dropped_chunk(self, stage: str) -> None:
        """Live audio the stage's full queue could not take (dropped and reported by the broker)."""
        self._stages[stage].dropped_audio_chunks += 1

    def refuse_busy(self, stage: str) -> str:
        """A request refused because the stage's queue is full: counted; the refusal's text."""
        runtime = self._stages[stage]
        runtime.busy_rejections += 1
        return f"stage {stage!r} has {runtime.pending} messages queued (max_queue={runtime.config.max_queue}); " \
               f"retry later"

    def take_health(self, handle: WorkerHandle, snapshot: Snapshot) -> None:
        """A worker's `ready` or `pong`: its process figures and each of its stages' plugin health."""
        handle.info = snapshot.model_dump(exclude={"stages"})
        for name, health in snapshot.stages.items():
            if name in self._stages:
                self._stages[name].health = read_plugin_health(health)

    def commit_params(self, params: dict[str, dict[str, Any]]) -> None:
        """A profile switch every worker accepted: restarts from now on start with these parameters."""
        for name, stage_params in params.items():
            if name in self._stages:
                self._stages[name].params = stage_params
