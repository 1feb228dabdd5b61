"""`plan` and `apply`: Hudi 1.1's overwrite rescale, made safe to repeat.

``apply`` runs one replacecommit T: requested (marked ours) -> inflight -> every partition whose bucket
count changes rewritten into new file groups -> a check that no writer committed to those partitions
meanwhile -> the new hashing_config saved as T while T is still pending -> T completes, listing the old
file groups as replaced. Any failure before completion rolls T back (config, data, instant), so readers
never see a half-done rescale and the next run starts clean. Our own leftovers from a crash are rolled
back first. That is the Native engine; with the Hudi engine (see core.engine), Hudi's own procedure does
the rewrite between the same plan, approval and checks (writing.hudi_engine).
"""

from __future__ import annotations

import json
import time
from dataclasses import replace

from hudi_bucket.checks.duplicates import count_duplicate_keys
from hudi_bucket.checks.layout_check import ViolationKind, verify_table
from hudi_bucket.checks.preconditions import check_table, roll_back_our_leftovers
from hudi_bucket.contract.reports import TABLE_ITEMS, ApplyResult, PlanResult, TableBuckets
from hudi_bucket.contract.requests import ApplyOptions, RescaleOptions
from hudi_bucket.core.commits import INSERT_OVERWRITE, CommitMetadata, WriteStat
from hudi_bucket.core.completeness import check_recorded_schema
from hudi_bucket.core.engine import Engine, native_repair_hint
from hudi_bucket.core.filegroups import FileGroup, all_plain
from hudi_bucket.core.hashing_config import HashingConfig
from hudi_bucket.core.planning import (
    ChangeReason,
    PartitionChange,
    PartitionLayout,
    Plan,
    layout_from_file_groups,
    make_plan,
)
from hudi_bucket.core.preflight import (
    PreflightResult,
    completed_after,
    concurrent_writes,
)
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.core.sizing import Sizing, measure, size_table
from hudi_bucket.core.timeline import WRITE_ACTIONS, Action, Timeline
from hudi_bucket.errors import ConcurrentWriterError, PlanError, PlanNotApprovedError
from hudi_bucket.hudi import config_store
from hudi_bucket.hudi.fs_view import load_file_groups, rows_by_base_file
from hudi_bucket.hudi.table import disable_metadata_table, latest_table_schema, timeline_store
from hudi_bucket.hudi.table_creation import NUM_BUCKETS, recorded_num_buckets
from hudi_bucket.reading.hudi_reads import hudi_read_failures, require_hudi_reader
from hudi_bucket.spark import metadata_writer
from hudi_bucket.spark.context import TableContext
from hudi_bucket.writing.hudi_engine import PROCEDURE, refuse_what_hudi_cannot_plan, rescale_with_hudi
from hudi_bucket.writing.instants import our_instant, refuse_if_taken_away
from hudi_bucket.writing.rescale import PartitionRewrite, read_records, rewrite_partitions

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


def apply(ctx: TableContext, options: ApplyOptions) -> ApplyResult:
    started = time.monotonic()
    ctx, cleaned = roll_back_our_leftovers(ctx)
    the_plan, checks, sizing = sized_plan(ctx, options, writing=True)
    notes = [f"rolled back our unfinished rescale {t}" for t in cleaned]
    if options.approved_plan and options.approved_plan != the_plan.plan_id:
        found = PlanResult(
            the_plan.reported(),
            checks.to_dict(),
            None if sizing is None else sizing.to_dict(max_choices=TABLE_ITEMS),
        )
        raise PlanNotApprovedError(
            f"the plan is {the_plan.plan_id}, but {options.approved_plan} was approved",
            result={**found.to_dict(), **TableBuckets().to_dict()},
        )
    writers = writer_options(the_plan.desired, ctx.hash_fields)
    if the_plan.is_noop:
        return ApplyResult(
            the_plan.reported(), None, 0, 0, 0, time.monotonic() - started, False, tuple(notes), writers
        )
    resolved = 0
    if checks.disable_metadata_table:
        ctx = ctx.reload()
        disable_metadata_table(ctx.storage, ctx.table)
        ctx = ctx.reload()
        notes += checks.notes
    if checks.engine is Engine.HUDI:
        instant, stats = rescale_with_hudi(ctx.spark, ctx, the_plan, the_plan.desired)
        shuffle_free = False
        notes.append(f"rewritten by Hudi's {PROCEDURE} procedure (engine Hudi)")
    else:
        shuffle_free = not options.full_shuffle and all(c.shuffle_free for c in the_plan.changes)
        instant, stats, shuffle_free, resolved = _rescale(
            ctx, the_plan, the_plan.desired, shuffle_free, keep_duplicates=options.keep_duplicates
        )
        config_store.archive_old_versions(ctx.storage, _first_active_commit(ctx.reload().table.timeline))
        if ctx.table.metadata_table_live:
            kept = ", ".join(ctx.table.config.metadata_partitions)
            notes.append(f"the metadata table kept in the same instant by Hudi's metadata writer ({kept})")
    return ApplyResult(
        the_plan.reported(),
        instant,
        len(stats),
        sum(s.num_writes for s in stats),
        sum(s.file_size_in_bytes for s in stats),
        time.monotonic() - started,
        shuffle_free,
        tuple(notes),
        writers,
        resolved,
    )


def _rescale(
    ctx: TableContext, the_plan: Plan, desired: BucketRules, shuffle_free: bool, *, keep_duplicates: bool
) -> tuple[str, tuple[WriteStat, ...], bool, int]:
    """Returns the instant, its write stats, whether the rewrite went without a shuffle, and how many keys
    found more than once kept one copy (held by two file groups; in a conversion, held twice at all,
    unless ``keep_duplicates``)."""
    storage, table = ctx.storage, ctx.table
    store = timeline_store(storage, table)
    partitions = tuple(c.partition for c in the_plan.changes)
    before = table.timeline
    schema = latest_table_schema(storage, table)  # what the rewrite must hold, and what it records
    with our_instant(ctx, Action.REPLACE_COMMIT, partitions) as requested:
        instant = requested.timestamp
        inflight = store.start(requested, CommitMetadata(INSERT_OVERWRITE, dict.fromkeys(partitions, ())))
        groups = load_file_groups(storage, table, partitions)
        rewrites = [
            PartitionRewrite(
                c.partition,
                c.new_buckets,
                groups[c.partition],
                c.old_buckets if c.shuffle_free else None,
                _resolves_duplicates(c, groups[c.partition], keep_duplicates),
            )
            for c in the_plan.changes
        ]
        converting = any(c.reason is ChangeReason.CONVERT for c in the_plan.changes)
        stats, shuffle_free, resolved = rewrite_partitions(
            ctx,
            rewrites,
            instant=instant,
            shuffle_free=shuffle_free,
            table_schema=schema,
            every_copy=converting,
        )
        refuse_if_taken_away(ctx, instant)
        _refuse_concurrent_writes(ctx, before, instant, partitions)
        # Saved while T is pending, as Hudi does, but last: a table's first version makes the configs
        # folder, and a crash must not leave that folder without a committed version for long.
        config_store.write_config(storage, HashingConfig.from_rules(desired, instant))
        by_partition: dict[str, tuple[WriteStat, ...]] = dict.fromkeys(partitions, ())
        for stat in stats:
            by_partition[stat.partition_path] += (stat,)
        completed = CommitMetadata(
            INSERT_OVERWRITE,
            write_stats=by_partition,
            replaced_file_ids={p: tuple(g.file_id for g in groups[p]) for p in partitions},
            extra_metadata={"schema": schema or ""},
        )
        if table.metadata_table_live:
            metadata_writer.update(ctx, instant, completed)
        store.complete(inflight, completed)
    return instant, stats, shuffle_free, resolved


def _resolves_duplicates(change: PartitionChange, groups: tuple[FileGroup, ...], keep: bool) -> bool:
    """Whether the rewrite keeps one copy of a key found more than once in the partition: in a conversion
    (a table that was not primary-keyed by buckets), unless asked to ``keep`` every copy; in a repair, or
    a rescale of a broken layout, where two file groups may hold one key. A clean layout whose records
    were not all checked is trusted, as Hudi's writers trust it."""
    if change.reason is ChangeReason.CONVERT:
        return not keep
    if change.reason is ChangeReason.REPAIR:
        return True
    layout = PartitionLayout(change.partition, tuple(g.file_id for g in groups))
    return change.old_buckets is not None and not layout.is_clean(change.old_buckets)


def _refuse_concurrent_writes(
    ctx: TableContext, before: Timeline, instant: str, partitions: tuple[str, ...]
) -> None:
    now = ctx.reload().table
    store = timeline_store(ctx.storage, now)
    touched = {
        i.timestamp: store.read_commit_metadata(i).partitions
        for i in completed_after(before, now.timeline, instant)
        if i.action in WRITE_ACTIONS
    }
    conflicts = concurrent_writes(before, now.timeline, instant, partitions, touched)
    if conflicts:
        named = ", ".join(f"{i.timestamp} ({i.action.value})" for i in conflicts[:5])
        raise ConcurrentWriterError(f"writers committed during the rescale: {named}; rescale rolled back")


def writer_options(rules: BucketRules, hash_fields: tuple[str, ...]) -> dict[str, str]:
    """What every Hudi writer of the table must set from now on. Hudi 1.1 writers load the rules, the
    rule type and the default from the hashing_config in force and override the last three options;
    they are listed so that the writers' own configuration says the same."""
    return {
        "hoodie.index.type": "BUCKET",
        "hoodie.bucket.index.engine": "SIMPLE",
        "hoodie.bucket.index.hash.field": ",".join(hash_fields),
        "hoodie.bucket.index.num.buckets": str(rules.default),
        "hoodie.bucket.index.partition.expressions": rules.render(),
        "hoodie.bucket.index.partition.rule.type": rules.rule_type,
    }


def _first_active_commit(timeline: Timeline) -> str | None:
    commits = [i for i in timeline.completed() if i.action in WRITE_ACTIONS]
    return commits[0].timestamp if commits else None
