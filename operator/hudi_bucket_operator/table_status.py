"""The HudiBucketTable status as the CRD declares it, as pydantic models (no I/O).

Each model is one object of the CRD's status schema: its fields are the CRD's properties (snake_case here,
camelCase in the resource), all optional as there, with the same enums. The operator builds them by
their Python names; ``TableStatus.to_api`` is the JSON it writes (absent fields left out), and
``TableStatus.of`` reads what the API server holds. ``writers`` (maintenance.py's memory of the steps
around an apply, modelled in writers_state.py) and ``history``'s entries are free-form in the CRD
(x-kubernetes-preserve-unknown-fields): their models keep the JSON the operator always wrote there.
``PlanSummary.of`` bounds a job's plan for status.plan.
tests/operator/test_table_status.py keeps the models and the CRD in step.
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
from hudi_bucket_operator.writers_state import StoredWriters

# Bounds of the status's lists and texts, as the CRD states them.
MAX_CONDITIONS = 16
MAX_ITEMS = 100
MAX_HISTORY = 50


class StatusPart(BaseModel):
    """One object of the status. Not strict: it is JSON the operator wrote, read back."""

    # Unknown fields are the API server's to prune; a field an older operator wrote and this one no
    # longer knows is dropped on the next write, as the server would.
    model_config = ConfigDict(
        frozen=True, extra="ignore", alias_generator=to_camel, validate_by_name=True, validate_by_alias=True
    )


class Condition(StatusPart):
    """One condition, in the shape kstatus reads."""

    type: Annotated[str, Field(max_length=316)]
    status: Literal["True", "False", "Unknown"]
    observed_generation: int | None = None
    last_transition_time: str | None = None  # RFC 3339, as the operator stamps it (…Z)
    reason: Annotated[str, Field(max_length=1024)] | None = None
    message: Annotated[str, Field(max_length=32768)] | None = None


class BucketConfig(StatusPart):
    """The bucket config in force on the table (its hashing_config), as last seen."""

    instant: str | None = None
    expressions: str | None = None
    default: int | None = None


class PartitionBucketCount(StatusPart):
    partition: str | None = None
    buckets: int | None = None


class PartitionCounts(StatusPart):
    """Each partition's bucket count under the config in force, bounded."""

    count: int | None = None
    by_buckets: Annotated[dict[str, int], Field(max_length=1000)] | None = None
    items: Annotated[list[PartitionBucketCount], Field(max_length=MAX_ITEMS)] | None = None
    omitted: int | None = None


class PlannedRules(StatusPart):
    """The config a plan writes."""

    expressions: str | None = None
    default: int | None = None


class SizingDone(StatusPart):
    """What sizing made of the table, and when the plan measured it."""

    sized_partitions: int | None = None
    resized: int | None = None
    shuffle_free: int | None = None
    rules: int | None = None
    measured: str | None = None


class PlannedChange(StatusPart):
    """One partition a plan rewrites."""

    partition: str | None = None
    # Nullable in the CRD: null says the partition has no bucket layout yet, and is written as such.
    old_buckets: int | None = None
    new_buckets: int | None = None
    file_groups: int | None = None
    rows: int | None = None
    bytes: int | None = None
    reason: str | None = None
    shuffle_free: bool | None = None
    duplicate_keys: int | None = None

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
    basis: str | None = None
    noop: bool | None = None
    config_changes: bool | None = None
    rules: PlannedRules | None = None
    sizing: SizingDone | None = None
    partitions: int | None = None
    repairs: int | None = None
    rows: int | None = None
    bytes: int | None = None
    duplicate_keys: int | None = None
    items: Annotated[list[PlannedChange], Field(max_length=MAX_ITEMS)] | None = None
    omitted: int | None = None

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
    violations: int | None = None
    by_kind: Annotated[dict[str, int], Field(max_length=16)] | None = None
    partitions: int | None = None
    items: Annotated[list[str], Field(max_length=MAX_ITEMS)] | None = None
    recheck: bool | None = None


class LastJob(StatusPart):
    """The latest verify, plan or apply job, and whether its result is recorded in the status."""

    name: str | None = None
    kind: str | None = None
    generation: int | None = None
    retry_token: str | None = None
    phase: str | None = None
    recorded: bool | None = None


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


class TableStatus(StatusPart):
    """The whole status of a HudiBucketTable."""

    observed_generation: int | None = None
    phase: str | None = None
    conditions: Annotated[list[Condition], Field(max_length=MAX_CONDITIONS)] | None = None
    config: BucketConfig | None = None
    partitions: PartitionCounts | None = None
    plan: PlanSummary | None = None
    layout: LayoutFound | None = None
    last_job: LastJob | None = None
    writers: StoredWriters | None = None
    history: Annotated[list[HistoryEntry], Field(max_length=MAX_HISTORY)] | None = None

    @classmethod
    def of(cls, raw: Mapping[str, Any] | None) -> TableStatus:
        """The status the API server holds (None or {}: a table never reconciled)."""
        return cls.model_validate(raw or {})

    def to_api(self) -> dict[str, Any]:
        """The status as the resource holds it: the CRD's names, and no field the operator left unset."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
