"""The report a `hudi-bucket-job` run writes, the typed results the operator reads, and where a report
travels in a cluster.

One JSON document per run. ``outcome`` is the one field a reader must look at first; ``result`` is the
command's own result, each command's a typed value (its ``to_dict``); a plan and an apply also report
the table's buckets after the run (``tableBuckets``). The operator reads, through ``JobReport``'s
accessors, the results of plan and apply (``PlanResult``, ``ApplyResult``) and of verify
(``LayoutCheck``); the other commands' results are for people. Each is a pydantic dataclass
(``core.report_json``): its fields declare the JSON, keys in camelCase as in the Kubernetes status they
end up in. The job and the operator are released together and ``version`` names the shape: a reader
refuses a report of another shape (``ReportError``, naming the fields it cannot read) rather than
misread it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, ClassVar
from urllib.parse import parse_qsl, urlencode, urlparse

from pydantic import (
    Field,
    JsonValue,
    PlainSerializer,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidationError,
    model_serializer,
)
from pydantic import dataclasses as pydantic_dataclasses

from hudi_bucket.contract.requests import JobKind
from hudi_bucket.core.file_sizes import FileGroupSizes
from hudi_bucket.core.hashing_config import HashingConfig
from hudi_bucket.core.planning import ReportedPlan
from hudi_bucket.core.report_json import REPORT_JSON, JsonObject, ReportJson
from hudi_bucket.errors import HudiBucketError, ReportError, StorageError

REPORT_VERSION = 3
TABLE_ITEMS = 50  # partitions a report names by their bucket count; the rest are counted


@contextmanager
def _reading(what: str, at: str = "") -> Iterator[None]:
    """Turns what cannot be read in a report into a ReportError naming each field's path (under ``at``)."""
    try:
        yield
    except ValidationError as err:
        problems = "; ".join(_problem(at, error["loc"], error["msg"]) for error in err.errors())
        raise ReportError(f"{what} cannot be read: {problems}") from None
    except (KeyError, TypeError, ValueError) as err:
        raise ReportError(f"{what} cannot be read: {type(err).__name__}: {err}") from None


def _problem(at: str, loc: tuple[int | str, ...], message: str) -> str:
    """A problem after the path of its field, as the report's JSON names it (``result.plan.changes[0].
    newBuckets``)."""
    path = at
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else part
    return f"{path}: {message}" if path else message


class Outcome(StrEnum):
    SUCCEEDED = "Succeeded"
    NO_CHANGE = "NoChange"  # already converged: nothing written
    FAILED = "Failed"


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class JobError(ReportJson):
    """What the operator shows of a failure: the error's kind, its message and what to do."""

    type: str
    message: str
    hint: str = ""

    @classmethod
    def of(cls, err: BaseException) -> JobError:
        if isinstance(err, HudiBucketError):
            return cls(type(err).__name__, str(err.args[0]) if err.args else str(err), err.hint)
        return cls(type(err).__name__, str(err))


# --- the report ------------------------------------------------------------------------------------------


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class ConfigInForce:
    """The table's hashing_config in force, as a status shows it."""

    instant: str
    expressions: str
    default: int


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class PartitionCount:
    partition: str
    buckets: int


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class PartitionBuckets:
    """Each partition's bucket count under the config in force, bounded: how many partitions have each
    count, and the partitions with the most buckets (``omitted`` counts the others)."""

    count: int
    by_buckets: dict[str, int]
    items: tuple[PartitionCount, ...]  # most buckets first
    omitted: int


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class TableBuckets(ReportJson):
    """The config in force and the partitions' bucket counts as a job last saw the table, after its run
    (a plan's and an apply's report hold them beside the result): the operator copies both into the
    status."""

    config: ConfigInForce | None = None
    partitions: PartitionBuckets | None = None

    @classmethod
    def of(
        cls, in_force: HashingConfig | None, counts: Mapping[str, int], max_items: int = TABLE_ITEMS
    ) -> TableBuckets:
        """From the config in force (None: none yet) and each partition's bucket count under it."""
        if in_force is None:
            return cls()
        largest = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:max_items]
        by_count = Counter(str(count) for count in counts.values())
        return cls(
            ConfigInForce(in_force.instant, in_force.expressions, in_force.default_bucket_number),
            PartitionBuckets(
                len(counts),
                dict(by_count),
                tuple(PartitionCount(partition, buckets) for partition, buckets in largest),
                len(counts) - len(largest),
            ),
        )


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class JobReport(ReportJson):
    command: JobKind
    table: str
    outcome: Outcome
    message: str
    started: str
    finished: str
    # The command's own result, its typed value's JSON (``to_dict``): read it with plan_result(),
    # apply_result() or layout_check(). JSON here, typed when read: a result that cannot be read is the
    # reader's ReportError (the job finished, its report is unusable), not a report that cannot be read.
    result: JsonObject = field(default_factory=dict)
    error: JobError | None = None
    table_buckets: TableBuckets | None = None  # plan's and apply's: the table after the run

    @model_serializer(mode="wrap")
    def _versioned(self, handler: SerializerFunctionWrapHandler) -> JsonObject:
        # The shape's version first; no key for an error or the table's buckets the report has not.
        fields: JsonObject = handler(self)
        for name, value in (("error", self.error), ("tableBuckets", self.table_buckets)):
            if value is None:
                del fields[name]
        return {"version": REPORT_VERSION, **fields}

    def plan_result(self) -> PlanResult:
        """A plan's result, or the plan a refused apply found instead; ReportError when unusable."""
        with _reading("the plan", at="result"):
            planned = PlanResult.from_dict(self.result)
        with _reading("the plan's sizing", at="result.sizing"):
            planned.sizing_summary  # noqa: B018 (read now, so that a malformed one is the report's error)
        return planned

    def apply_result(self) -> ApplyResult:
        """An apply's result; ReportError when unusable."""
        with _reading("the apply's result", at="result"):
            return ApplyResult.from_dict(self.result)

    def layout_check(self) -> LayoutCheck | None:
        """The check a verify report holds; None when the job failed before checking."""
        if self.command is not JobKind.VERIFY or "violationCount" not in self.result:
            return None
        with _reading("the layout check", at="result"):
            return TypeAdapter(LayoutCheck).validate_python({**self.result, "checkedAt": self.finished})

    def to_json(self) -> bytes:
        return (json.dumps(self.to_dict(), indent=2) + "\n").encode()

    @classmethod
    def from_json(cls, text: str | bytes) -> JobReport:
        """The report ``to_json`` wrote; ReportError for anything else."""
        with _reading("the report"):
            doc = json.loads(text)
            version = doc.get("version") if isinstance(doc, dict) else None
            if version != REPORT_VERSION:
                raise ReportError(
                    f"the report has version {version!r}; this release reads version {REPORT_VERSION}"
                )
            return cls.from_dict(doc)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


# --- what the operator reads ----------------------------------------------------------------------------


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class SizingSummary(ReportJson):
    """What sizing made of the table, for the status: how many partitions it sized, how many of them
    the plan rewrites and how many of those without a shuffle, and the rules it proposes (the plan's
    desired config holds them after the explicit ones)."""

    sized_partitions: int
    resized: int
    shuffle_free: int
    rules: int


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class PlanResult(ReportJson):
    plan: ReportedPlan  # bounded: Plan.reported()
    preflight: JsonObject  # PreflightResult.to_dict(): the checks that passed, and notes (for people)
    # ReportedSizing's JSON: the rules, the largest choices (for people, but for the counts the summary
    # reads). Absent from a plan made before sizing existed.
    sizing: JsonObject | None = None

    @property
    def sizing_summary(self) -> SizingSummary | None:
        if self.sizing is None:
            return None
        counts = _SizingCounts.from_dict(self.sizing)
        return SizingSummary(counts.sized_partitions, counts.resized, counts.shuffle_free, len(counts.rules))


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class _SizingCounts(ReportJson):
    """What the summary reads of a plan's sizing."""

    sized_partitions: int
    resized: int
    shuffle_free: int
    rules: tuple[JsonValue, ...]


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class ApplyResult(ReportJson):
    plan: ReportedPlan  # bounded: Plan.reported()
    instant: str | None  # None: already converged, nothing written
    files_written: int
    rows_written: int
    bytes_written: int
    seconds: Annotated[float, PlainSerializer(lambda seconds: round(seconds, 3))]
    shuffle_free: bool
    notes: tuple[str, ...]
    writer_options: dict[str, str]  # what every Hudi writer of the table must set from now on
    duplicates_resolved: int = 0  # keys found more than once (a repair: in two file groups) kept one copy

    @model_serializer(mode="wrap")
    def _for_people(self, handler: SerializerFunctionWrapHandler) -> JsonObject:
        # The order reports always had: what every writer must set and the instant first, notes last.
        fields: JsonObject = handler(self)
        notes = fields.pop("notes")
        return {
            "writerOptions": fields.pop("writerOptions"),
            "instant": fields.pop("instant"),
            **fields,
            "notes": notes,
        }

    @property
    def partitions_repaired(self) -> int:
        return 0 if self.instant is None else self.plan.repairs


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class LayoutCheck:
    """What a verify job found (its result, whether it passed or failed on violations): the operator's
    status.layout and LayoutHealthy condition."""

    checked_at: str
    violations: Annotated[int, Field(alias="violationCount")]
    by_kind: Annotated[dict[str, int], Field(alias="violationsByKind")]
    partition_count: int
    partitions: tuple[str, ...]  # the first of them, sorted
    file_group_sizes: FileGroupSizes = FileGroupSizes()

    @property
    def ok(self) -> bool:
        return self.violations == 0


# --- where a report goes in a cluster --------------------------------------------------------------------

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")


@dataclass(frozen=True)
class ReportOwner:
    """The object a report's ConfigMap belongs to (the table): deleting it deletes the report."""

    api_version: str
    kind: str
    name: str
    uid: str

    def reference(self) -> dict[str, str]:
        """An ownerReference that does not block the owner's deletion (which would need a permission)."""
        return {"apiVersion": self.api_version, "kind": self.kind, "name": self.name, "uid": self.uid}


@dataclass(frozen=True)
class ConfigMapReport:
    """``configmap://<namespace>/<name>[?owner=...]``: the report goes into ``data["report.json"]`` of that
    ConfigMap, which the job creates, owned by ``owner`` when the URI names one.

    A SparkApplication's driver cannot hand a file to the operator, but it can reach the Kubernetes API.
    The job, not the operator, creates the ConfigMap: one API write less per job for the operator.
    """

    SCHEME: ClassVar[str] = "configmap"
    KEY: ClassVar[str] = "report.json"
    _OWNER_FIELDS: ClassVar[tuple[str, ...]] = ("apiVersion", "kind", "name", "uid")

    namespace: str
    name: str
    owner: ReportOwner | None = None

    @property
    def uri(self) -> str:
        base = f"{self.SCHEME}://{self.namespace}/{self.name}"
        if self.owner is None:
            return base
        values = (self.owner.api_version, self.owner.kind, self.owner.name, self.owner.uid)
        return f"{base}?{urlencode(dict(zip(self._OWNER_FIELDS, values, strict=True)))}"

    @classmethod
    def is_named_by(cls, uri: str) -> bool:
        return uri.startswith(f"{cls.SCHEME}://")

    @classmethod
    def parse(cls, uri: str) -> ConfigMapReport:
        """The ConfigMap ``uri`` names, or StorageError."""
        parsed = urlparse(uri)
        namespace, name = parsed.netloc, parsed.path.strip("/")
        query = dict(parse_qsl(parsed.query, keep_blank_values=True))
        if (
            parsed.scheme != cls.SCHEME
            or not _DNS_LABEL.fullmatch(namespace)
            or len(namespace) > 63
            or not _DNS_SUBDOMAIN.fullmatch(name)
            or len(name) > 253
            or (parsed.query and sorted(query) != sorted(cls._OWNER_FIELDS))
            or not all(query.values())
            or parsed.fragment
        ):
            raise StorageError(
                f"{uri!r} is not a ConfigMap report URI",
                hint=f"write it as {cls.SCHEME}://<namespace>/<name>, with an owner as "
                "?apiVersion=..&kind=..&name=..&uid=..",
            )
        owner = ReportOwner(*(query[key] for key in cls._OWNER_FIELDS)) if query else None
        return cls(namespace, name, owner)
