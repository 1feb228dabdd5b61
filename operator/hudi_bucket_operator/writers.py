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
may start. Paths are dotted (``spec.job.state``): each part a field name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Protocol

from hudi_bucket_operator.schedule import Schedule, ScheduleError, parse_duration

SCALED = ("Deployment", "StatefulSet")  # apps/v1 kinds paused through their scale subresource
DEFAULT_QUIESCE_TIMEOUT = 15 * 60  # seconds
MAX_WRITERS = 20
_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*")
_API_VERSION = re.compile(r"([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?v[0-9]+((alpha|beta)[0-9]+)?")
_KIND = re.compile(r"[A-Z][A-Za-z0-9]*")
_PLURAL = re.compile(r"[a-z][a-z0-9]*")
_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DURATION_FORMAT = "a duration in minutes, hours or days, such as 15m, 3h or 1d"
WINDOW_SCHEDULE_FORMAT = (
    "a cron expression in UTC as spec.verify.schedule takes one (no interval): five fields such as "
    "'0 1 * * *' or '0 1 * * SAT,SUN', or @hourly, @daily, @weekly, @monthly or @yearly"
)


class Problems(Protocol):
    """Where spec problems go (spec.py's list of them)."""

    def append(self, problem: str) -> None: ...

    def wrong(self, where: str, expected: str, value: object) -> None: ...

    def __len__(self) -> int: ...


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


# --- parsing, as spec.py does the rest --------------------------------------------------------------------


def parse_writers(raw: object, problems: Problems) -> WritersSpec:
    if raw is None:
        return WritersSpec()
    if not isinstance(raw, Mapping):
        problems.wrong("spec.writers", "an object with workloads (and quiesceTimeout)", raw)
        return WritersSpec()
    timeout = DEFAULT_QUIESCE_TIMEOUT
    if raw.get("quiesceTimeout") is not None:
        text = raw["quiesceTimeout"]
        seconds = parse_duration(text) if isinstance(text, str) else None
        if seconds is None:
            problems.wrong("spec.writers.quiesceTimeout", _DURATION_FORMAT, text)
        timeout = seconds or timeout
    items = raw.get("workloads")
    if items is None:
        return WritersSpec((), timeout)
    if not isinstance(items, list) or len(items) > MAX_WRITERS:
        problems.wrong("spec.writers.workloads", f"a list of at most {MAX_WRITERS} workloads", items)
        return WritersSpec((), timeout)
    writers = [_writer(f"spec.writers.workloads[{i}]", item, problems) for i, item in enumerate(items)]
    found = [w for w in writers if w is not None]
    keys = [w.key for w in found]
    for key in sorted({k for k in keys if keys.count(k) > 1}):
        problems.append(f"spec.writers.workloads names {key} more than once")
    return WritersSpec(tuple(found), timeout)


def _writer(where: str, item: object, problems: Problems) -> Writer | None:
    if not isinstance(item, Mapping):
        problems.wrong(where, "an object with kind and name", item)
        return None
    before = len(problems)
    kind, name = item.get("kind"), item.get("name")
    if not (isinstance(kind, str) and _KIND.fullmatch(kind)):
        problems.wrong(f"{where}.kind", "a kind such as Deployment, StatefulSet or FlinkDeployment", kind)
        return None
    if not (isinstance(name, str) and len(name) <= 253 and _NAME.fullmatch(name)):
        problems.wrong(f"{where}.name", "the workload's name, in the table's namespace", name)
        return None
    suspend = item.get("suspend")
    if kind in SCALED:
        if suspend is not None:
            problems.append(f"{where}.suspend: a {kind} is paused by scaling it to 0; drop suspend")
            return None
        api_version = item.get("apiVersion", "apps/v1")
        if api_version != "apps/v1":
            problems.wrong(f"{where}.apiVersion", "apps/v1 (or left out)", api_version)
            return None
        return Writer("apps/v1", kind, name, kind.lower() + "s")
    api_version = item.get("apiVersion")
    if not (isinstance(api_version, str) and _API_VERSION.fullmatch(api_version)):
        problems.wrong(f"{where}.apiVersion", "the resource's apiVersion (group/version)", api_version)
    plural = item.get("plural", kind.lower() + "s")
    if not (isinstance(plural, str) and _PLURAL.fullmatch(plural)):
        problems.wrong(f"{where}.plural", "the resource's plural name in lower case", plural)
    field = _suspend(f"{where}.suspend", suspend, kind, problems)
    if (
        len(problems) > before
        or field is None
        or not isinstance(api_version, str)
        or not isinstance(plural, str)
    ):
        return None
    return Writer(api_version, kind, name, plural, field)


def _suspend(where: str, raw: object, kind: str, problems: Problems) -> SuspendField | None:
    if not isinstance(raw, Mapping):
        problems.wrong(
            where,
            f"how a {kind} is suspended: path, suspended, running, stoppedPath and stopped "
            "(only a Deployment or StatefulSet is paused by scale)",
            raw,
        )
        return None
    ok = True
    for key in ("path", "stoppedPath"):
        if not (isinstance(raw.get(key), str) and _PATH.fullmatch(raw[key])):
            problems.wrong(f"{where}.{key}", "a dotted field path such as spec.job.state", raw.get(key))
            ok = False
    for key in ("suspended", "running"):
        if not (isinstance(raw.get(key), str) and raw[key]):
            problems.wrong(f"{where}.{key}", "the field's value when so", raw.get(key))
            ok = False
    stopped = raw.get("stopped")
    if not (isinstance(stopped, list) and stopped and all(isinstance(s, str) and s for s in stopped)):
        problems.wrong(f"{where}.stopped", "the values of stoppedPath that say it stopped", stopped)
        ok = False
    if ok and str(raw["path"]).split(".")[0] != "spec":
        problems.append(f"{where}.path must be under spec (the operator patches nothing else)")
        ok = False
    if not ok:
        return None
    values = tuple(str(s) for s in stopped) if isinstance(stopped, list) else ()  # a list: checked above
    return SuspendField(raw["path"], raw["suspended"], raw["running"], raw["stoppedPath"], values)


def parse_window(raw: object, problems: Problems) -> Window | None:
    if raw is None:
        return None
    where = "spec.apply.window"
    if not isinstance(raw, Mapping):
        problems.wrong(where, "an object with schedule (cron, UTC) and duration", raw)
        return None
    schedule, duration = raw.get("schedule"), raw.get("duration")
    parsed = None
    try:
        if isinstance(schedule, str) and parse_duration(schedule) is None:
            parsed = Schedule.parse(schedule)
    except ScheduleError:
        pass
    if parsed is None:
        problems.wrong(f"{where}.schedule", WINDOW_SCHEDULE_FORMAT, schedule)
    seconds = parse_duration(duration) if isinstance(duration, str) else None
    if seconds is None:
        problems.wrong(f"{where}.duration", _DURATION_FORMAT, duration)
    if parsed is None or seconds is None:
        return None
    return Window(parsed, seconds, f"{schedule} for {duration}")
