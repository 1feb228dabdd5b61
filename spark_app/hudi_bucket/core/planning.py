"""The plan: which partitions ``apply`` rewrites and why, from the observed layout and the rules.

Like Hudi's rescale, we rewrite a partition when its bucket count changes; also when its layout already
breaks the bucket index (a bucket id past N, or two live file groups with one bucket id: what failed
writes leave behind, or records that a record-level check found in the wrong bucket), and every
partition when converting a table with no bucket layout yet.

The plan id hashes only what ``apply`` would do: the config version it replaces and the config it
writes, and each partition it rewrites (from which count to which, and why). Not the instant it was
planned at: writers keep committing while a table waits for its approval and its window, and their
commits change no part of the rewrite. A table that changed in a way that changes it (a new partition
to rewrite, sizing choosing other counts, a layout to repair, a config written by someone else, even one
saying the same) gets a new id. Rows and bytes are estimates and stay out of it too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from itertools import pairwise
from typing import Annotated, Self

from pydantic import (
    PlainSerializer,
    PlainValidator,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)
from pydantic import dataclasses as pydantic_dataclasses
from pydantic_core import PydanticCustomError

from hudi_bucket.core.buckets import bucket_id_from_file_id, is_bucket_file_id
from hudi_bucket.core.filegroups import FileGroup
from hudi_bucket.core.report_json import REPORT_JSON, JsonObject, ReportJson
from hudi_bucket.core.rules import MAX_BUCKETS, BucketRules, Matcher
from hudi_bucket.errors import InvalidBucketCountError, InvalidRuleError, NotBucketIndexedError, PlanError

PLAN_ID_PREFIX = "sha256:"
_NAMED = 5  # offending partitions an error names; the rest are counted
_REPLAN = "plan again; do not edit plan reports"
REPORTED_CHANGES = 1000  # changes a report names (the largest); ~250 bytes each, for a 1 MiB ConfigMap


class ChangeReason(StrEnum):
    RESCALE = "rescale"  # the partition's bucket count changes
    CONVERT = "convert"  # the table has no bucket layout yet
    REPAIR = "repair"  # the layout breaks the bucket index (file ids, or records in the wrong bucket)


@dataclass(frozen=True)
class PartitionLayout:
    """One partition's live file groups as observed; ``rows`` and ``bytes`` are 0 when unknown."""

    partition: str
    file_ids: tuple[str, ...]
    rows: int = 0
    bytes: int = 0

    @property
    def is_bucket_layout(self) -> bool:
        return all(is_bucket_file_id(file_id) for file_id in self.file_ids)

    def is_clean(self, buckets: int) -> bool:
        """Whether a bucket index of ``buckets`` buckets can use this layout as it is: every file
        group a bucket below N, and no bucket held by two file groups."""
        if not self.is_bucket_layout:
            return False
        ids = [bucket_id_from_file_id(file_id) for file_id in self.file_ids]
        return all(bucket < buckets for bucket in ids) and len(set(ids)) == len(ids)


def layout_from_file_groups(
    partition: str, groups: Iterable[FileGroup], rows_by_file_id: Mapping[str, int] | None = None
) -> PartitionLayout:
    """The layout of ``partition`` from its live file groups; bytes are the latest base files' sizes."""
    groups = tuple(groups)
    strays = sorted({group.partition for group in groups} - {partition})
    if strays:
        raise ValueError(f"file groups of partition(s) {strays} given as partition {partition!r}")
    rows = rows_by_file_id or {}
    return PartitionLayout(
        partition,
        tuple(group.file_id for group in groups),
        sum(rows.get(group.file_id, 0) for group in groups),
        sum(base.size for group in groups if (base := group.latest_base_file) is not None),
    )


def is_shuffle_free(layout: PartitionLayout, old_buckets: int, new_buckets: int) -> bool:
    """Whether records can move to their new buckets file group by file group, with no shuffle: when
    one count divides the other, each new bucket draws from fixed old buckets (8 -> 16: b splits into
    b and b+8; 16 -> 8: b and b+8 merge into b), if each old file group holds exactly one old bucket."""
    divides = old_buckets >= 1 and (new_buckets % old_buckets == 0 or old_buckets % new_buckets == 0)
    return divides and layout.is_clean(old_buckets)


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class PartitionChange(ReportJson):
    partition: str
    old_buckets: int | None  # None when converting: the partition has no bucket count yet
    new_buckets: int
    file_groups: int
    rows: int
    bytes: int
    reason: ChangeReason
    shuffle_free: bool = False
    # Keys found more than once in the partition (counted for a conversion); 0 when a report of a plan
    # made before they were counted has none.
    duplicate_keys: int = 0


def _config_dict(rules: BucketRules) -> dict[str, str | int]:
    """A config as Hudi stores it: what decides whether two configs are the same."""
    return {"expressions": rules.render(), "default": rules.default, "rule": rules.rule_type}


def _rules_from_report(value: object) -> BucketRules:
    if isinstance(value, BucketRules):
        return value
    if not (
        isinstance(value, Mapping)
        and isinstance(value.get("expressions"), str)
        and type(value.get("default")) is int
        and isinstance(value.get("rule"), str)
    ):
        raise PydanticCustomError(
            "bucket_config", "must be a config as Hudi stores it (its expressions, default and rule)"
        )
    if not value["expressions"]:  # Hudi's ';' (no rules) renders as '', which its parser would reject
        return BucketRules((), value["default"], value["rule"])
    # What Hudi's parser would refuse is an InvalidRuleError, a ValueError: pydantic names the field.
    return BucketRules.parse(value["expressions"], value["default"], value["rule"])


# In a report, a config is written as Hudi stores it.
ReportedRules = Annotated[
    BucketRules,
    PlainValidator(_rules_from_report),
    PlainSerializer(_config_dict, return_type=dict[str, str | int]),
]


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class Plan:
    """What ``apply`` would do: write ``desired`` as the config and rewrite ``changes`` (kept sorted by
    partition, so equal plans compare equal whatever order their inputs came in). A report carries it
    bounded (``reported``)."""

    desired: ReportedRules
    current: ReportedRules | None
    changes: tuple[PartitionChange, ...]
    base_instant: str | None = None  # the latest completed instant when planned: information only
    config_version: str | None = None  # the instant of the config in force, which apply replaces

    def __post_init__(self) -> None:
        object.__setattr__(self, "changes", tuple(sorted(self.changes, key=lambda c: c.partition)))

    @property
    def config_changes(self) -> bool:
        """Whether a new config version must be written (always when none is in force)."""
        return self.current is None or _config_dict(self.current) != _config_dict(self.desired)

    @property
    def is_noop(self) -> bool:
        """Already converged: apply would write nothing."""
        return not self.config_changes and not self.changes

    @property
    def plan_id(self) -> str:
        """A digest of what apply would do (see the module's docstring): not of the instant it was
        planned at, nor of rows and bytes, which must not invalidate an approval."""
        return _plan_id(self.config_version, self.desired, self.current, self.changes)

    def with_duplicate_keys(self, counts: Mapping[str, int]) -> Plan:
        """This plan, each change saying how many keys its partition holds more than once."""
        changes = tuple(replace(c, duplicate_keys=counts.get(c.partition, 0)) for c in self.changes)
        return replace(self, changes=changes)

    @property
    def repairs(self) -> tuple[PartitionChange, ...]:
        return tuple(c for c in self.changes if c.reason is ChangeReason.REPAIR)

    def reported(self, max_changes: int = REPORTED_CHANGES) -> ReportedPlan:
        """This plan as a report carries it: whole but for its changes, of which the ``max_changes``
        largest by bytes."""
        largest = sorted(self.changes, key=lambda c: (-c.bytes, c.partition))[:max_changes]
        return ReportedPlan(
            id=self.plan_id,
            desired=self.desired,
            current=self.current,
            config_changes=self.config_changes,
            noop=self.is_noop,
            partitions=len(self.changes),
            repairs=len(self.repairs),
            rows=sum(c.rows for c in self.changes),
            bytes=sum(c.bytes for c in self.changes),
            changes=tuple(sorted(largest, key=lambda c: c.partition)),
            base_instant=self.base_instant,
            config_version=self.config_version,
            duplicate_keys=sum(c.duplicate_keys for c in self.changes),
            omitted_changes=len(self.changes) - len(largest),
        )


def _plan_id(
    config_version: str | None,
    desired: BucketRules,
    current: BucketRules | None,
    changes: Iterable[PartitionChange],
) -> str:
    canonical = {
        "config_version": config_version,
        "desired": _config_dict(desired),
        "current": None if current is None else _config_dict(current),
        "changes": [[c.partition, c.old_buckets, c.new_buckets, c.reason.value] for c in changes],
    }
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return PLAN_ID_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class ReportedPlan(ReportJson):
    """A plan as a job's report carries it, for the operator and for people: its id, configs and totals,
    and its largest changes. A report travels in a ConfigMap (1 MiB), where a plan of 100,000
    partitions does not fit whole; the apply that follows plans again and compares ids, so the id is
    what holds an approval to the whole plan. A report with every change in it must hash to its id."""

    id: str
    desired: ReportedRules
    current: ReportedRules | None
    config_changes: bool
    noop: bool
    partitions: int  # the changes in the plan, reported or not
    repairs: int  # of them, partitions rewritten to mend their layout
    rows: int
    bytes: int
    changes: tuple[PartitionChange, ...]  # the largest, by bytes, in partition order
    base_instant: str | None = None
    config_version: str | None = None  # None in a report of a plan made before config versions
    duplicate_keys: int = 0
    omitted_changes: int = 0  # 0 in a report made before plans were bounded

    @model_validator(mode="after")
    def _whole_or_counted(self) -> Self:
        if len(self.changes) + self.omitted_changes != self.partitions:
            raise PydanticCustomError(
                "plan_changes",
                "the plan report names {named} change(s) and omits {omitted}, but counts {partitions} ({hint})",
                {"named": len(self.changes), "omitted": self.omitted_changes,
                 "partitions": self.partitions, "hint": _REPLAN},
            )  # fmt: skip
        actual = _plan_id(self.config_version, self.desired, self.current, self.changes)
        if self.omitted_changes == 0 and self.id != actual:
            raise PydanticCustomError(
                "plan_id",
                "the plan report claims id {claimed}, its content hashes to {actual} ({hint})",
                {"claimed": self.id, "actual": actual, "hint": _REPLAN},
            )
        return self

    @model_serializer(mode="wrap")
    def _changes_last(self, handler: SerializerFunctionWrapHandler) -> JsonObject:
        # The order reports always had: the id and the instants first, the changes (the long list) last;
        # omittedChanges only when some were (a whole plan's report is what it always was).
        fields: JsonObject = handler(self)
        order = ("id", "baseInstant", "configVersion", "desired", "current", "configChanges", "noop",
                 "partitions", "repairs", "rows", "bytes", "duplicateKeys", "changes")  # fmt: skip
        omitted = {"omittedChanges": self.omitted_changes} if self.omitted_changes else {}
        return {**{key: fields[key] for key in order}, **omitted}


def make_plan(
    layouts: Iterable[PartitionLayout],
    current: BucketRules | None,
    desired: BucketRules,
    matcher: Matcher,
    *,
    current_buckets: int | None = None,
    convert: bool = False,
    base_instant: str | None = None,
    config_version: str | None = None,
    misplaced: Collection[str] = (),
) -> Plan:
    """Plan the move from ``current`` (None: no config in force) to ``desired``.

    Without a config in force, every partition's current count is ``current_buckets`` (a plain
    bucket-index table's N), else ``desired.default``. With ``convert``, every non-empty partition is
    rewritten: its file ids are not bucket ids, whatever digits they may happen to start with.
    Both only say how to onboard a table: once a config is in force it is the truth, and they are
    ignored, so that a declared spec stays valid after its first apply.
    ``misplaced`` names the partitions whose records a record-level check (``verify``) found out of
    their buckets: each is repaired, with a shuffle, whether or not its count changes.
    ``config_version`` (the instant of the config in force) is part of the plan's id; ``base_instant``
    (the latest completed instant) is only shown.
    """
    desired.validate(matcher)
    _check_options(current_buckets, convert)
    if current is not None:
        current_buckets, convert = None, False
    ordered = _by_partition(layouts)
    if not convert:
        _refuse_non_bucket_layouts(ordered)
    fallback = desired.default if current_buckets is None else current_buckets
    changes = []
    for layout in ordered:
        if not layout.file_ids:
            continue  # an empty partition fits any count
        new = desired.buckets_for(layout.partition, matcher)
        if convert:
            changes.append(_change(layout, None, new, ChangeReason.CONVERT))
            continue
        old = fallback if current is None else _buckets_in_force(current, layout.partition, matcher)
        if layout.partition in misplaced:
            changes.append(_change(layout, old, new, ChangeReason.REPAIR))
        elif old != new:
            changes.append(_change(layout, old, new, ChangeReason.RESCALE, is_shuffle_free(layout, old, new)))
        elif not layout.is_clean(old):
            changes.append(_change(layout, old, new, ChangeReason.REPAIR))
    return Plan(desired, current, tuple(changes), base_instant, config_version)


def _check_options(current_buckets: int | None, convert: bool) -> None:
    if current_buckets is not None and (
        isinstance(current_buckets, bool) or not 1 <= current_buckets <= MAX_BUCKETS
    ):
        raise InvalidBucketCountError(
            f"current bucket count {current_buckets!r} is outside 1..{MAX_BUCKETS}",
            hint="give the bucket count the table was written with (hoodie.bucket.index.num.buckets)",
        )
    if convert and current_buckets is not None:
        raise PlanError(
            "--convert and --current-buckets given, but a table without a bucket layout has no bucket count",
            hint="drop --current-buckets",
        )


def _by_partition(layouts: Iterable[PartitionLayout]) -> list[PartitionLayout]:
    ordered = sorted(layouts, key=lambda layout: layout.partition)
    for before, after in pairwise(ordered):
        if before.partition == after.partition:
            raise PlanError(f"partition {before.partition!r} is listed twice", hint="list each once")
    return ordered


def _refuse_non_bucket_layouts(layouts: list[PartitionLayout]) -> None:
    offending = [layout.partition for layout in layouts if not layout.is_bucket_layout]
    if not offending:
        return
    named = ", ".join(repr(partition) for partition in offending[:_NAMED])
    rest = f" and {len(offending) - _NAMED} more" if len(offending) > _NAMED else ""
    raise NotBucketIndexedError(
        f"the table is not bucket-indexed: file ids in partition(s) {named}{rest} are not bucket ids"
    )


def _buckets_in_force(current: BucketRules, partition: str, matcher: Matcher) -> int:
    try:
        return current.buckets_for(partition, matcher)
    except InvalidRuleError as error:
        raise InvalidRuleError(
            f"the bucket config in force: {error.args[0]}",
            hint="plan with the Java regex engine (the Spark plan job), which evaluates every rule Hudi does",
        ) from None


def _change(
    layout: PartitionLayout, old: int | None, new: int, reason: ChangeReason, shuffle_free: bool = False
) -> PartitionChange:
    return PartitionChange(
        layout.partition, old, new, len(layout.file_ids), layout.rows, layout.bytes, reason, shuffle_free
    )
