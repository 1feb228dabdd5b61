"""Planning: what `apply` would do to a table now, read from the table as it is (its file groups, the
config in force, sizing's measurements and, when asked, its records' buckets and duplicate keys), and
refused where `apply` would refuse. Writes nothing. A layer of its own under the commands, since both
the `plan` and the `apply` commands plan, and commands do not import each other.
"""

from __future__ import annotations

import json
from dataclasses import replace

from hudi_bucket.checks.duplicates import count_duplicate_keys
from hudi_bucket.checks.layout_check import ViolationKind, verify_table
from hudi_bucket.checks.preconditions import check_table
from hudi_bucket.contract.requests import RescaleOptions
from hudi_bucket.core.completeness import check_recorded_schema
from hudi_bucket.core.engine import Engine, native_repair_hint
from hudi_bucket.core.filegroups import all_plain
from hudi_bucket.core.planning import Plan, layout_from_file_groups, make_plan
from hudi_bucket.core.preflight import PreflightResult
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.core.sizing import Sizing, measure, size_table
from hudi_bucket.errors import PlanError
from hudi_bucket.hudi import config_store
from hudi_bucket.hudi.fs_view import load_file_groups, rows_by_base_file
from hudi_bucket.hudi.table import latest_table_schema
from hudi_bucket.hudi.table_creation import NUM_BUCKETS, recorded_num_buckets
from hudi_bucket.reading.hudi_reads import hudi_read_failures, require_hudi_reader
from hudi_bucket.spark.context import TableContext
from hudi_bucket.writing.hudi_engine import refuse_what_hudi_cannot_plan
from hudi_bucket.writing.rescale import read_records

# What only a record-level check finds; the file ids' own violations are the plan's (PartitionLayout).
_RECORD_VIOLATIONS = frozenset({ViolationKind.MISPLACED_RECORDS})


def plan(
    ctx: TableContext, options: RescaleOptions, *, writing: bool = False
) -> tuple[Plan, PreflightResult]:
    """What ``apply`` would do now; writes nothing. Refuses what ``apply`` would refuse, except other
    writers' pending instants, which the preflight notes: a table is planned while its writers run, and
    applied once they are stopped. ``writing`` (the apply's own plan) refuses them too."""
    the_plan, checks, _ = sized_plan(ctx, options, writing=writing)
    return the_plan, checks


def sized_plan(
    ctx: TableContext, options: RescaleOptions, *, count_duplicates: bool = False, writing: bool = False
) -> tuple[Plan, PreflightResult, Sizing | None]:
    """``plan``, and what sizing decided when the options ask for it: its rules follow the explicit ones
    in the plan's desired config. Measured from the same table state, sizing decides the same again,
    so an apply of an approved plan finds the plan it was approved as. With ``count_duplicates``, a
    conversion reads every key of the partitions it rewrites and counts those found more than once
    (``apply`` keeps one copy of each, unless told to keep them all)."""
    table, storage = ctx.table, ctx.storage
    # Only the Native engine lays out a table that is not bucket-indexed yet.
    engine = Engine.NATIVE if options.convert and options.engine is Engine.AUTO else options.engine
    checks = check_table(
        ctx,
        disable_metadata_table=options.disable_metadata_table,
        engine=engine,
        others_pending_noted=not writing,
        rewrites=True,
    )
    if options.rules.rules or options.sizing is None:  # with sizing alone, its rules are checked below
        options.rules.validate(ctx.matcher)
    in_force = config_store.load_in_force(storage, table.timeline.pending_replace_timestamps())
    current = in_force.to_rules() if in_force else None
    if current is None and not options.convert:
        options = replace(options, current_buckets=_plain_count(ctx, options.current_buckets))
    rows = rows_by_base_file(storage, table)
    file_groups = load_file_groups(storage, table)
    layouts = [
        layout_from_file_groups(
            partition,
            groups,
            {
                g.file_id: rows[g.latest_base_file.path]
                for g in groups
                if g.latest_base_file and g.latest_base_file.path in rows
            },
        )
        for partition, groups in file_groups.items()
    ]
    desired, sizing = options.rules, None
    if options.sizing is not None:
        sizes = [measure(p, _count_now(current, options, p, ctx), gs) for p, gs in file_groups.items()]
        sizing = size_table(sizes, options.rules, options.sizing, ctx.matcher)
        desired = sizing.desired
    latest = table.timeline.latest_completed
    result = make_plan(
        layouts,
        current,
        desired,
        ctx.matcher,
        current_buckets=options.current_buckets,
        convert=options.convert,
        base_instant=latest.timestamp if latest else None,
        config_version=in_force.instant if in_force else None,
        misplaced=_misplaced(ctx, current, options) if options.check_records else (),
    )
    if checks.engine is Engine.HUDI:
        hint = native_repair_hint(engine) if in_force is not None else ""
        refuse_what_hudi_cannot_plan(result, in_force, hint)
    read_by_hudi = [c.partition for c in result.changes if not all_plain(file_groups[c.partition])]
    if checks.engine is Engine.NATIVE and result.changes:
        require_hudi_reader(ctx.spark, read_by_hudi, "bootstrapped or MERGE_ON_READ file slices")
        _check_recorded_schema(ctx)
    if count_duplicates and options.convert and result.changes:
        _, records = read_records(ctx, {c.partition: file_groups[c.partition] for c in result.changes})
        if records is not None:
            with hudi_read_failures(ctx, read_by_hudi):
                result = result.with_duplicate_keys(count_duplicate_keys(records))
    return result, checks, sizing


def _check_recorded_schema(ctx: TableContext) -> None:
    """The schema the rewrite reads and writes by holds the fields the records are keyed by."""
    recorded = latest_table_schema(ctx.storage, ctx.table)
    if recorded is None:
        return
    config = ctx.table.config
    check_recorded_schema(
        [f["name"] for f in json.loads(recorded)["fields"]],
        {
            "record key": config.record_key_fields,
            "partition": config.partition_fields,
            "ordering": config.ordering_fields,
        },
        bootstrapped=config.bootstrap_base_path is not None,
    )


def _misplaced(ctx: TableContext, current: BucketRules | None, options: RescaleOptions) -> frozenset[str]:
    """The partitions whose records are not all in their buckets under the counts in force (verify's
    record check; a table being converted has no buckets to check)."""
    if options.convert:
        return frozenset()
    found = verify_table(
        ctx.spark,
        ctx.storage,
        ctx.table,
        rules_for_partition=lambda partition: _count_in_force(current, options, partition, ctx),
        hash_fields=ctx.hash_fields,
        key_style=ctx.key_style,
    )
    return frozenset(v.partition for v in found.violations if v.kind in _RECORD_VIOLATIONS)


def _count_in_force(
    current: BucketRules | None, options: RescaleOptions, partition: str, ctx: TableContext
) -> int:
    count = _count_now(current, options, partition, ctx)
    if count is None:
        raise PlanError(f"partition {partition!r} has no bucket count to check its records against")
    return count


def _plain_count(ctx: TableContext, given: int | None) -> int | None:
    """A plain bucket index's count, before its first config: the one given, else the one the table
    records (tables our ``write`` made); PlanError when they differ, as a wrong count would leave records
    in buckets their writers never look in."""
    recorded = recorded_num_buckets(ctx.table.config)
    if given is not None and recorded is not None and given != recorded:
        raise PlanError(
            f"--current-buckets is {given}, but {ctx.table.uri} records {recorded} bucket(s) ({NUM_BUCKETS})",
            hint=f"give --current-buckets {recorded}, or leave it out",
        )
    return recorded if given is None else given


def _count_now(
    current: BucketRules | None, options: RescaleOptions, partition: str, ctx: TableContext
) -> int | None:
    """A partition's bucket count before the plan, as ``make_plan`` reads it (None: not bucketed yet)."""
    if current is not None:
        return current.buckets_for(partition, ctx.matcher)
    if options.convert:
        return None
    return options.current_buckets if options.current_buckets is not None else options.rules.default
