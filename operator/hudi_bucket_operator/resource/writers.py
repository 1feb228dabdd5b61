"""The workloads that write a table, and the maintenance window a rescale runs in (pure: no I/O).

A rescale rewrites partitions that Hudi's writers must not touch meanwhile, and a writer that keeps
running keeps the bucket counts it loaded when it started. So ``spec.writers`` names them, by kind and
name, and the operator pauses them around an apply and resumes them as they were. Two consents guard
this, so that a table's author borrows no power over someone else's workload:

- the workload's own: its owner labels or annotates it ``hudi.bucketops.io/writer-of: <table>`` (an
  annotation may list several tables, comma-separated); a writer without it is never touched;
- the admins': how a kind is paused is theirs to declare (``WriterPolicy``, Helm values ``writers``),
  never the table's. A ``Deployment`` or ``StatefulSet`` is scaled through its ``scale`` subresource to 0
  replicas and later back; any kind the admins declare has a suspend field (``SuspendField``) set to its
  suspended value and later back, stopped once its status field holds one of the stopped values (a
  FlinkDeployment: ``spec.job.state`` suspended, stopped when ``status.jobStatus.state`` is SUSPENDED,
  FINISHED or CANCELED).

``spec.apply.window`` (a cron schedule in UTC and a duration) says when a plan that rewrites partitions
may start. Paths are dotted (``spec.job.state``): each part a field name. Both are read from the spec
by spec.py, with the models of manifest.py.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter

from hudi_bucket_operator.resource.manifest import Expect
from hudi_bucket_operator.resource.schedule import Schedule
from hudi_bucket_operator.resource.setting import Helm, Seconds, Shown, json_text

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


class _Suspend(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    path: Annotated[str, Field(pattern=r"^spec(\.[A-Za-z_][A-Za-z0-9_-]*)+$")]
    value: Annotated[str, Field(min_length=1)]
    stopped_path: Annotated[
        str, Field(alias="stoppedPath", pattern=r"^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*$")
    ]
    stopped: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]


class _Kind(BaseModel):
    """A kind of writer the admins let tables pause, and how, as Helm value writers.kinds declares it."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    api_version: Annotated[
        str,
        Field(alias="apiVersion", pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/v[0-9]+((alpha|beta)[0-9]+)?$"),
    ]
    kind: Annotated[str, Field(pattern=r"^[A-Z][A-Za-z0-9]*$")]
    plural: Annotated[str, Field(pattern=r"^[a-z][a-z0-9]*$")]
    suspend: _Suspend

    def writer_kind(self) -> WriterKind:
        how = self.suspend
        field = SuspendField(how.path, how.value, how.stopped_path, tuple(how.stopped))
        return WriterKind(self.api_version, self.kind, self.plural, field)


def _declared(value: object) -> object:
    """Writer kinds from their declaration (a JSON list of ``_Kind``); kinds given as such stay."""
    if not isinstance(value, str):
        return value
    return tuple(kind.writer_kind() for kind in _KINDS.validate_python(json_text(value)))


_KINDS = TypeAdapter(list[_Kind])


def _declaration(kinds: tuple[WriterKind, ...]) -> str:
    """Kinds as their variable declares them (a declared kind has its suspend field)."""
    declared = []
    for kind in kinds:
        how = kind.suspend or SuspendField("", "", "", ())
        suspend = {
            "path": how.path,
            "value": how.suspended,
            "stoppedPath": how.stopped_path,
            "stopped": how.stopped,
        }
        declared.append(
            {"apiVersion": kind.api_version, "kind": kind.kind, "plural": kind.plural, "suspend": suspend}
        )
    return json.dumps(declared)


class WriterPolicy(BaseModel):
    """What the admins let tables pause (Helm values ``writers``, each read from the environment variable
    its alias names): whether at all, the kinds besides Deployment and StatefulSet and how each is
    suspended, the longest quiesceTimeout a table may ask for, and how long an apply may hold its writers
    paused before they are resumed regardless."""

    # Lax: every value arrives as a string ("true" is True). Built by name in tests.
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    enabled: Annotated[
        bool,
        Field(
            alias="HBO_WRITERS_ENABLED",
            description="whether tables may have the operator pause their writers (spec.writers)",
        ),
        Expect("true or false"),
        Helm("writers.enabled"),
    ] = False
    kinds: Annotated[
        tuple[WriterKind, ...],
        Field(
            alias="HBO_WRITER_KINDS",
            description="kinds of writers besides Deployment and StatefulSet, and how each is suspended",
        ),
        BeforeValidator(_declared),
        Expect(
            'a JSON list of {"apiVersion", "kind", "plural", "suspend": {"path", "value", "stoppedPath", '
            '"stopped"}}'
        ),
        Shown(_declaration),
        Helm("writers.kinds"),
    ] = ()
    max_quiesce_timeout: Annotated[
        Seconds,
        Field(
            alias="HBO_MAX_QUIESCE_TIMEOUT",
            description="the longest spec.writers.quiesceTimeout a table may ask for",
        ),
        Helm("writers.maxQuiesceTimeout"),
    ] = 3600
    apply_deadline: Annotated[
        Seconds,
        Field(
            alias="HBO_APPLY_DEADLINE",
            description="how long an apply may hold writers paused: past it, it is cancelled and they resume",
        ),
        Helm("writers.applyDeadline"),
    ] = 6 * 3600

    def kind(self, name: str) -> WriterKind | None:
        return next((k for k in (*SCALED_KINDS, *self.kinds) if k.kind == name), None)

    def problems(self, refs: WriterRefs) -> list[str]:
        """Why the table may not have the operator pause these writers (none: it may)."""
        if not refs.workloads:
            return []
        if not self.enabled:
            return [
                "spec.writers names workloads, but this operator may not pause writers: its admins have not "
                "enabled it (Helm value writers.enabled)"
            ]
        problems = []
        if unknown := sorted({w.kind for w in refs.workloads if self.kind(w.kind) is None}):
            known = [k.kind for k in (*SCALED_KINDS, *self.kinds)]
            problems.append(
                f"spec.writers.workloads names kind(s) {unknown} that the operator does not know how to "
                f"pause: it pauses {known} (its admins declare other kinds in the Helm value writers.kinds)"
            )
        if refs.quiesce_timeout > self.max_quiesce_timeout:
            problems.append(
                f"spec.writers.quiesceTimeout is {refs.quiesce_timeout} s, over the "
                f"{self.max_quiesce_timeout} s the admins allow (Helm value writers.maxQuiesceTimeout)"
            )
        return problems

    def resolve(self, refs: WriterRefs) -> WritersSpec:
        """The writers as the operator pauses them: each kind as the admins declared it (a kind they did
        not declare is left out: ``problems`` refused it)."""
        writers = []
        for ref in refs.workloads:
            kind = self.kind(ref.kind)
            if kind is not None:
                writers.append(Writer(kind.api_version, kind.kind, ref.name, kind.plural, kind.suspend))
        return WritersSpec(tuple(writers), refs.quiesce_timeout)


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
