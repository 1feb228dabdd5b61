"""The HudiBucketTable status, as pydantic models from which the CRD's status schema is generated (no I/O).

Each model is one object of the CRD's status schema (crd.py): its fields are the CRD's properties
(snake_case here, camelCase in the resource), each described by its docstring, all optional. The
operator builds them by their Python names; ``TableStatus.to_api`` is the JSON it writes (absent fields left out), and
``TableStatus.of`` reads what the API server holds. ``writers`` (maintenance.py's memory of the steps
around an apply, modelled in writers_state.py) and ``history``'s entries are free-form in the CRD
(``FREE_FORM``): their models keep the JSON the operator always wrote there. ``PlanSummary.of`` bounds a
job's plan for status.plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
)
from pydantic.alias_generators import to_camel

from hudi_bucket.core.planning import PartitionChange, ReportedPlan
from hudi_bucket_operator.resource.crd_schema import FREE_FORM, NULLABLE, Int32, Int64, extra, list_map
from hudi_bucket_operator.resource.writers_state import StoredWriters

# Bounds of the status's lists and texts, as the CRD states them.
MAX_CONDITIONS = 16
MAX_ITEMS = 100
MAX_HISTORY = 50


class StatusPart(BaseModel):
    """One object of the status. Not strict: it is JSON the operator wrote, read back."""

    # Unknown fields are the API server's to prune; a field an older operator wrote and this one no
    # longer knows is dropped on the next write, as the server would.
    model_config = ConfigDict(
        frozen=True,
        extra="ignore",
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        use_attribute_docstrings=True,
    )


class Condition(StatusPart):
    """One condition, in the shape kstatus reads."""

    type: Annotated[str, Field(max_length=316)]
    """Ready, Reconciling, Stalled or LayoutHealthy."""
    status: Literal["True", "False", "Unknown"]
    """True, False or Unknown."""
    observed_generation: Int64 | None = None
    """The generation the condition was set for."""
    # RFC 3339, as the operator stamps it (…Z)
    last_transition_time: Annotated[str, extra(format="date-time")] | None = None
    """When the status last changed."""
    reason: Annotated[str, Field(max_length=1024)] | None = None
    """One CamelCase word for programs (docs/troubleshooting.md explains each)."""
    message: Annotated[str, Field(max_length=32768)] | None = None
    """What happened and, when something went wrong, what to do."""


class BucketConfig(StatusPart):
    """The bucket config in force on the table (its hashing_config), as last seen."""

    instant: str | None = None
    """The instant of the hashing_config version in force (the table's timeline)."""
    expressions: str | None = None
    """Its rules, as Hudi stores them: pattern,buckets;pattern,buckets."""
    default: Int32 | None = None
    """Its default bucket count: the partitions no rule matches have this many buckets."""


class PartitionBucketCount(StatusPart):
    partition: str | None = None
    """The partition's path, e.g. day=2025-11-11."""
    buckets: Int32 | None = None
    """Its bucket count."""


class PartitionCounts(StatusPart):
    """Each partition's bucket count under the config in force, bounded."""

    count: Int64 | None = None
    """How many partitions the table has."""
    by_buckets: Annotated[dict[str, Int64], Field(max_length=1000)] | None = None
    """How many partitions have each bucket count."""
    items: Annotated[list[PartitionBucketCount], Field(max_length=MAX_ITEMS)] | None = None
    """The partitions with the most buckets; omitted counts the rest."""
    omitted: Int64 | None = None
    """Partitions left out of items."""


class PlannedRules(StatusPart):
    """The config a plan writes."""

    expressions: str | None = None
    """The rules it writes, as Hudi stores them: pattern,buckets;pattern,buckets."""
    default: Int32 | None = None
    """The default bucket count it writes."""


class SizingDone(StatusPart):
    """What sizing made of the table, and when the plan measured it."""

    sized_partitions: Int64 | None = None
    """Partitions sizing measured."""
    resized: Int64 | None = None
    """Partitions whose bucket count sizing changes (those the plan rewrites)."""
    shuffle_free: Int64 | None = None
    """Of those, the ones rewritten without a shuffle (one count divides the other)."""
    rules: Int64 | None = None
    """How many rules sizing proposes."""
    measured: str | None = None
    """When the plan measured the table (replanEvery counts from here)."""


class PlannedChange(StatusPart):
    """One partition a plan rewrites."""

    partition: str | None = None
    """The partition's path."""
    # Nullable in the CRD: null says the partition has no bucket layout yet, and is written as such.
    old_buckets: Annotated[Int32 | None, NULLABLE] = None
    """None when the partition has no bucket layout yet."""
    new_buckets: Int32 | None = None
    """Its bucket count after the apply."""
    file_groups: Int64 | None = None
    """Its file groups now."""
    rows: Int64 | None = None
    """Its rows."""
    bytes: Int64 | None = None
    """Its base files' bytes."""
    reason: str | None = None
    """Why it is rewritten: rescale (its bucket count changes), convert (no bucket layout yet) or repair (its
    layout breaks the bucket index).
    """
    shuffle_free: bool | None = None
    """Rewritten file group by file group, without a shuffle."""
    duplicate_keys: Int64 | None = None
    """Keys found more than once in it (a conversion; see spec.buckets.keepDuplicates)."""

    @classmethod
    def of(cls, change: PartitionChange) -> PlannedChange:
        return cls(
            partition=change.partition,
            old_buckets=change.old_buckets,
            new_buckets=change.new_buckets,
            file_groups=change.file_groups,
            rows=change.rows,
            bytes=change.bytes,
            reason=change.reason.value,
            shuffle_free=change.shuffle_free,
            duplicate_keys=change.duplicate_keys,
        )

    @model_serializer(mode="wrap")
    def _null_old_buckets(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        data = handler(self)
        if "old_buckets" in self.model_fields_set:
            data.setdefault("oldBuckets" if info.by_alias else "old_buckets", None)
        return data


class PlanSummary(StatusPart):
    """The latest plan, bounded: approved by copying its id into spec.apply.approvedPlan."""

    id: str | None = None
    """The plan's id: spec.apply.approvedPlan names it to approve the plan."""
    planned_at: str | None = None
    """When a plan of this id was first made (RFC 3339): planning again to the same plan keeps it, so that
    a plan's wait for approval counts from then.
    """
    basis: str | None = None
    """What the plan awaiting approval was made from (a digest of its request): a change that only approves it
    starts its apply without planning again.
    """
    noop: bool | None = None
    """True when the table already is what the spec asks: nothing to apply."""
    config_changes: bool | None = None
    """Whether the plan writes a new hashing_config version."""
    rules: PlannedRules | None = None
    """The config the plan writes: the explicit rules, then those sizing proposes, and the default."""
    sizing: SizingDone | None = None
    """What sizing (spec.buckets.sizing) made of the table: the partitions it sized, how many the plan
    rewrites and how many of those without a shuffle, and its rules.
    """
    partitions: Int64 | None = None
    """Partitions the plan rewrites."""
    repairs: Int64 | None = None
    """Partitions among them rewritten to repair their layout (reason repair)."""
    rows: Int64 | None = None
    """Rows in the partitions it rewrites."""
    bytes: Int64 | None = None
    """Bytes of base files in the partitions it rewrites."""
    duplicate_keys: Int64 | None = None
    """Keys a conversion found more than once in a partition (see spec.buckets.keepDuplicates)."""
    items: Annotated[list[PlannedChange], Field(max_length=MAX_ITEMS)] | None = None
    """The largest partition changes; omitted counts the rest."""
    omitted: Int64 | None = None
    """Changed partitions left out of items."""

    @classmethod
    def of(cls, plan: ReportedPlan, max_items: int) -> PlanSummary:
        """A job's plan, bounded: its totals, its ``max_items`` largest changes by bytes (a report names
        the largest ones), and how many were left out."""
        if not 0 <= max_items <= MAX_ITEMS:
            raise ValueError(f"max_items must be in 0..{MAX_ITEMS}, not {max_items}")
        largest = sorted(plan.changes, key=lambda c: (-c.bytes, c.partition))[:max_items]
        return cls(
            id=plan.id,
            noop=plan.noop,
            config_changes=plan.config_changes,
            # The rules the plan writes: what approving it puts in force (sizing's proposals among them).
            rules=PlannedRules(expressions=plan.desired.render(), default=plan.desired.default),
            partitions=plan.partitions,
            repairs=plan.repairs,
            rows=plan.rows,
            bytes=plan.bytes,
            duplicate_keys=plan.duplicate_keys,
            items=[PlannedChange.of(change) for change in largest],
            omitted=plan.partitions - len(largest),
        )


class LayoutFound(StatusPart):
    """What the last layout check (spec.verify) found."""

    checked_at: str | None = None
    """When the layout was checked (RFC 3339)."""
    violations: Int64 | None = None
    """Violations found, in every partition."""
    by_kind: Annotated[dict[str, Int64], Field(max_length=16)] | None = None
    """Violations by kind: not-a-bucket-file, bucket-out-of-range, duplicate-bucket, misplaced-records,
    missing-record-key.
    """
    partitions: Int64 | None = None
    """Partitions holding violations."""
    items: Annotated[list[str], Field(max_length=MAX_ITEMS)] | None = None
    """Partitions with violations; the count above includes those left out."""
    recheck: bool | None = None
    """A repair was applied since; the layout is checked again."""
    file_groups: Int64 | None = None
    """Live file groups measured (a bucket each), those of bootstrapped data left out."""
    largest_file_group_bytes: Int64 | None = None
    """The largest file group's latest file slice, in bytes."""
    median_file_group_bytes: Int64 | None = None
    """The median file group's latest file slice, in bytes."""

    @property
    def skew(self) -> float | None:
        """The largest file group against the median (1 is an even table), when both were measured."""
        if not self.largest_file_group_bytes or not self.median_file_group_bytes:
            return None
        return self.largest_file_group_bytes / self.median_file_group_bytes


class LastJob(StatusPart):
    """The latest verify, plan or apply job, and whether its result is recorded in the status."""

    name: str | None = None
    """Its SparkApplication's name, in the table's namespace."""
    kind: str | None = None
    """plan, apply or verify."""
    generation: Int64 | None = None
    """The table generation it was started for."""
    retry_token: str | None = None
    """The retry annotation's value it was started with (a new value retries a failed job)."""
    phase: str | None = None
    """Pending, Running, Completed or Failed."""
    recorded: bool | None = None
    """Whether its result is in this status."""


class HistoryEntry(StatusPart):
    """One apply that rewrote the table, newest first in status.history."""

    job: str | None = None
    instant: str | None = None
    plan_id: str | None = None
    partitions: int | None = None
    rows: int | None = None
    seconds: float | None = None
    outcome: str | None = None
    finished: str | None = None
    repairs: int | None = None
    duplicates_resolved: int | None = None
    writers_downtime_seconds: float | None = None  # how long its writers were paused for it
    decided_by: str | None = None  # who approved (or denied) the plan in the cluster, by annotation
    reason: str | None = None  # and why


class TableStatus(StatusPart):
    """The status of a HudiBucketTable, filled by the operator."""

    observed_generation: Int64 | None = None
    """The generation the operator last looked at: lower than metadata.generation, it has not seen the last
    change yet.
    """
    phase: str | None = None
    """One word for people: Verifying, Planning, AwaitingApproval, AwaitingWindow, PausingWriters, Applying,
    ResumingWriters, Ready, Stalled or Paused.
    """
    conditions: Annotated[list[Condition], Field(max_length=MAX_CONDITIONS), list_map("type")] | None = None
    """Ready, Reconciling and Stalled, in the shape kstatus reads; LayoutHealthy once the layout was checked
    (spec.verify).
    """
    config: BucketConfig | None = None
    """The bucket config in force on the table (its hashing_config), as last seen."""
    partitions: PartitionCounts | None = None
    """Each partition's bucket count under the config in force, as last seen (bounded)."""
    plan: PlanSummary | None = None
    """The latest plan; approve it by copying id into spec.apply.approvedPlan."""
    layout: LayoutFound | None = None
    """What the last layout check (spec.verify) found: violations of the bucket layout, the partitions holding
    them (bounded), and when it checked.
    """
    last_job: LastJob | None = None
    """The latest verify, plan or apply job, and whether its result is recorded here."""
    writers: Annotated[StoredWriters, FREE_FORM] | None = None
    """The steps around an apply that rewrites partitions (step: AwaitingWindow, Pausing, Applying, Resuming),
    each writer's state before it was paused, and the last pause (when, for how long, which writers).
    """
    history: Annotated[list[Annotated[HistoryEntry, FREE_FORM]], Field(max_length=MAX_HISTORY)] | None = None
    """The latest applies, newest first."""

    @classmethod
    def of(cls, raw: Mapping[str, Any] | None) -> TableStatus:
        """The status the API server holds (None or {}: a table never reconciled)."""
        return cls.model_validate(raw or {})

    def to_api(self) -> dict[str, Any]:
        """The status as the resource holds it: the CRD's names, and no field the operator left unset."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
