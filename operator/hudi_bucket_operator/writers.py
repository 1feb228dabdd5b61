"""The workloads that write a table, and the maintenance window a rescale runs in (pure: no I/O).

A rescale rewrites partitions that Hudi's writers must not touch meanwhile, and a writer that keeps
running keeps the bucket counts it loaded when it started. So ``spec.writers`` names them, and the
operator pauses them around an apply and resumes them as they were:

- a ``Deployment`` or ``StatefulSet`` through its ``scale`` subresource: to 0 replicas, later back to
  the replicas it had;
- any other resource with a suspend field: ``suspend.path`` is set to ``suspend.suspended``, later back
  to the value it had; it is stopped once ``suspend.stoppedPath`` holds one of ``suspend.stopped``
  (a FlinkDeployment: ``spec.job.state`` suspended|running, stopped when ``status.jobStatus.state`` is
  SUSPENDED, FINISHED or CANCELED).

``spec.apply.window`` (a cron schedule in UTC and a duration) says when a plan that rewrites partitions
may start. Paths are dotted (``spec.job.state``): each part a field name. Both are read from the spec
by spec.py, with the models of manifest.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from hudi_bucket_operator.schedule import Schedule

DEFAULT_QUIESCE_TIMEOUT = 15 * 60  # seconds


@dataclass(frozen=True)
class SuspendField:
    """How a custom resource is suspended: a field and its values, and the status field saying it stopped."""

    path: str
    suspended: str
    running: str
    stopped_path: str
    stopped: tuple[str, ...]


@dataclass(frozen=True)
class Writer:
    """One workload writing the table, in the table's namespace."""

    api_version: str
    kind: str
    name: str
    plural: str
    suspend: SuspendField | None = None  # None: a Deployment or StatefulSet, paused by scale

    @property
    def key(self) -> str:
        return f"{self.kind}/{self.name}"

    @property
    def scaled(self) -> bool:
        return self.suspend is None

    def to_status(self) -> dict[str, Any]:
        """What resuming it needs, whatever the spec says by then."""
        out: dict[str, Any] = {"apiVersion": self.api_version, "kind": self.kind, "name": self.name}
        out["plural"] = self.plural
        if self.suspend is not None:
            out["path"] = self.suspend.path
        return out


@dataclass(frozen=True)
class Window:
    """When data may move: from each time ``schedule`` names, for ``seconds``."""

    schedule: Schedule
    seconds: int
    text: str

    def start_of(self, now: datetime) -> datetime | None:
        """The start of the window ``now`` is in, or None outside every window."""
        # The first start after now - duration: a window that began then or earlier is over.
        start = self.schedule.next_after(now - timedelta(seconds=self.seconds))
        return start if start <= now < start + timedelta(seconds=self.seconds) else None

    def next_start(self, now: datetime) -> datetime:
        return self.schedule.next_after(now)


@dataclass(frozen=True)
class WritersSpec:
    workloads: tuple[Writer, ...] = ()
    quiesce_timeout: int = DEFAULT_QUIESCE_TIMEOUT  # seconds


@dataclass(frozen=True)
class ObservedWriter:
    """A writer as the API shows it now."""

    found: bool = True
    replicas: int | None = None  # a scaled writer's spec.replicas
    pods: int = 0  # its pods, terminating ones included
    value: str | None = None  # a custom resource's suspend field
    stopped: bool = False  # a custom resource's status says it stopped

    def state(self) -> dict[str, Any]:
        """What it is set to now, in the shape status records it."""
        return {"replicas": self.replicas} if self.replicas is not None else {"value": self.value}


class WriterVerb(StrEnum):
    PAUSE = "pause"
    RESUME = "resume"


@dataclass(frozen=True)
class WriterAction:
    """Set a writer's replicas (scaled) or its suspend field (``path``) to ``value``."""

    verb: WriterVerb
    api_version: str
    kind: str
    plural: str
    name: str
    replicas: int | None = None
    path: str = ""
    value: str | None = None

    @property
    def scaled(self) -> bool:
        return self.replicas is not None


def get_path(obj: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path, or None where a part is missing."""
    value: Any = obj
    for part in path.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def merge_patch_for(path: str, value: object) -> dict[str, Any]:
    """A JSON merge patch setting the dotted ``path`` to ``value``."""
    patch: dict[str, Any] = {}
    node = patch
    *parents, last = path.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value
    return patch


def observe_custom(writer: Writer, obj: Mapping[str, Any]) -> ObservedWriter:
    assert writer.suspend is not None
    value = get_path(obj, writer.suspend.path)
    stopped = get_path(obj, writer.suspend.stopped_path)
    return ObservedWriter(
        value=None if value is None else str(value),
        stopped=value == writer.suspend.suspended and str(stopped) in writer.suspend.stopped,
    )
