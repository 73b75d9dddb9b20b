"""What the governor's parts need of the workers, as ports: the roster's records and the supervisor's hands.

The switcher sends each worker its new parameters and commits them once all
took them; the memory hook samples each worker, asks it to release memory or
unloads it when idle. Both read the worker records (tcccd.core.roster.Roster)
and act through the supervisor (tcccd.core.supervisor.Supervisor), which the
daemon gives them as these ports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from tcccd.config import StageConfig
    from tcccd.core.workers import WorkerHandle
    from tcccd.wire.control import Control


class WorkerRecords(Protocol):
    def handles(self) -> list[WorkerHandle]: ...

    def handle(self, worker: str) -> WorkerHandle: ...

    def stage_configs(self) -> list[StageConfig]: ...

    def stage_params(self) -> dict[str, dict[str, Any]]: ...


class WorkerHands(Protocol):
    def send_control(self, handle: WorkerHandle, control: Control) -> None: ...

    def commit_params(self, params: dict[str, dict[str, Any]], profile: str) -> None: ...

    def unload(self, handle: WorkerHandle) -> bool: ...


class OpenRequests(Protocol):
    """tcccd.core.requests.RequestTable."""

    def stages_in_use(self) -> set[str]: ...
