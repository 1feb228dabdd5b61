"""The workloads that write a table, and the maintenance window a rescale runs in (pure: no I/O).

A rescale rewrites partitions that Hudi's writers must not touch meanwhile, and a writer that keeps
running keeps the bucket counts it loaded when it started. So ``spec.writers`` names them, by kind and
name, and the operator pauses them around an apply and resumes them as they were. Two consents guard
this, so that a table's author borrows no power over someone else's workload:

- the workload's own: its owner labels or annotates it ``hudi.bucketops.io/writer-of: <table>`` (an
  annotation may list several tables, comma-separated); a writer without it is never touched;
- the admins': how a kind is paused is theirs to declare (``policy.writer_policy``, Helm values ``writers``),
  never the table's. A ``Deployment`` or ``StatefulSet`` is scaled through its ``scale`` subresource to 0
  replicas and later back; any kind the admins declare has a suspend field (``SuspendField``) set to its
  suspended value and later back, stopped once its status field holds one of the stopped values (a
  FlinkDeployment: ``spec.job.state`` suspended, stopped when ``status.jobStatus.state`` is SUSPENDED,
  FINISHED or CANCELED).

``spec.apply.window`` (a cron schedule in UTC and a duration) says when a plan that rewrites partitions
may start. Paths are dotted (``spec.job.state``): each part a field name. Both are read from the spec
by its models (resource/spec/).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from enum import StrEnum
from typing import Any

from hudi_bucket_operator.resource.schedule import Schedule

DEFAULT_QUIESCE_TIMEOUT = 15 * 60  # seconds
WRITER_OF = "hudi.bucketops.io/writer-of"  # a workload's consent: the tables it lets pause it


@dataclass(frozen=True)
class SuspendField:
    """How a custom resource is suspended: a field and its value, and the status field saying it stopped."""

    path: str
    suspended: str
    stopped_path: str
    stopped: tuple[str, ...]


@dataclass(frozen=True)
class WriterKind:
    """A kind of workload the operator may pause, and how: by scale (``suspend`` None), else by the
    suspend field the admins declared for it."""

    api_version: str
    kind: str
    plural: str
    suspend: SuspendField | None = None


SCALED_KINDS = (
    WriterKind("apps/v1", "Deployment", "deployments"),
    WriterKind("apps/v1", "StatefulSet", "statefulsets"),
)


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


@dataclass(frozen=True)
class Window:
    """When data may move: from each time ``schedule`` names on the clocks of ``zone``, for ``seconds``."""

    schedule: Schedule
    seconds: int
    text: str
    zone: tzinfo = UTC

    def start_of(self, now: datetime) -> datetime | None:
        """The start of the window ``now`` is in, or None outside every window."""
        # The first start after now - duration: a window that began then or earlier is over.
        start = self.schedule.next_after(now - timedelta(seconds=self.seconds), self.zone)
        return start if start <= now < start + timedelta(seconds=self.seconds) else None

    def next_start(self, now: datetime) -> datetime:
        return self.schedule.next_after(now, self.zone)


@dataclass(frozen=True)
class WorkloadRef:
    """A writer as a table names it: a kind and a name, in the table's namespace."""

    kind: str
    name: str

    @property
    def key(self) -> str:
        return f"{self.kind}/{self.name}"


@dataclass(frozen=True)
class WriterRefs:
    """spec.writers as the table says it."""

    workloads: tuple[WorkloadRef, ...] = ()
    quiesce_timeout: int = DEFAULT_QUIESCE_TIMEOUT  # seconds


@dataclass(frozen=True)
class WritersSpec:
    """The table's writers as the operator pauses them (its kinds resolved by the admins' policy)."""

    workloads: tuple[Writer, ...] = ()
    quiesce_timeout: int = DEFAULT_QUIESCE_TIMEOUT  # seconds


def consents(metadata: Mapping[str, Any], table: str) -> bool:
    """Whether a workload's owner let ``table`` pause it: its label, or its annotation listing it."""
    label = (metadata.get("labels") or {}).get(WRITER_OF)
    annotation = (metadata.get("annotations") or {}).get(WRITER_OF) or ""
    return label == table or table in {name.strip() for name in annotation.split(",")}


@dataclass(frozen=True)
class ObservedWriter:
    """A writer as the API shows it now."""

    found: bool = True
    consents: bool = True  # its owner lets this table pause it (see ``consents``)
    replicas: int | None = None  # a scaled writer's spec.replicas
    pods: int = 0  # its pods, terminating ones included
    value: str | None = None  # a custom resource's suspend field
    stopped: bool = False  # a custom resource's status says it stopped


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


def observe_custom(writer: Writer, obj: Mapping[str, Any], table: str) -> ObservedWriter:
    assert writer.suspend is not None
    value = get_path(obj, writer.suspend.path)
    stopped = get_path(obj, writer.suspend.stopped_path)
    return ObservedWriter(
        consents=consents(obj.get("metadata") or {}, table),
        value=None if value is None else str(value),
        stopped=value == writer.suspend.suspended and str(stopped) in writer.suspend.stopped,
    )
