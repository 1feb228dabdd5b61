"""`apply`: Hudi 1.1's overwrite rescale, made safe to repeat (its plan: hudi_bucket.planning).

``apply`` runs one replacecommit T: requested (marked ours) -> inflight -> every partition whose bucket
count changes rewritten into new file groups -> a check that no writer committed to those partitions
meanwhile -> the new hashing_config saved as T while T is still pending -> T completes, listing the old
file groups as replaced. Any failure before completion rolls T back (config, data, instant), so readers
never see a half-done rescale and the next run starts clean. Our own leftovers from a crash are rolled
back first. That is the Native engine; with the Hudi engine (see core.engine), Hudi's own procedure does
the rewrite between the same plan, approval and checks (writing.hudi_engine).
"""

from __future__ import annotations

import time

from hudi_bucket.checks.preconditions import roll_back_our_leftovers
from hudi_bucket.contract.reports import TABLE_ITEMS, ApplyResult, PlanResult
from hudi_bucket.contract.requests import ApplyOptions
from hudi_bucket.core.commits import INSERT_OVERWRITE, CommitMetadata, WriteStat
from hudi_bucket.core.engine import Engine
from hudi_bucket.core.filegroups import FileGroup
from hudi_bucket.core.hashing_config import HashingConfig
from hudi_bucket.core.planning import (
    ChangeReason,
    PartitionChange,
    PartitionLayout,
    Plan,
)
from hudi_bucket.core.preflight import (
    completed_after,
    concurrent_writes,
)
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.core.timeline import WRITE_ACTIONS, Action, Timeline
from hudi_bucket.errors import ConcurrentWriterError, PlanNotApprovedError
from hudi_bucket.hudi import config_store
from hudi_bucket.hudi.fs_view import load_file_groups
from hudi_bucket.hudi.table import disable_metadata_table, latest_table_schema, timeline_store
from hudi_bucket.planning import sized_plan
from hudi_bucket.spark import metadata_writer
from hudi_bucket.spark.context import TableContext
from hudi_bucket.writing.hudi_engine import PROCEDURE, rescale_with_hudi
from hudi_bucket.writing.instants import our_instant, refuse_if_taken_away
from hudi_bucket.writing.rescale import PartitionRewrite, rewrite_partitions


def apply(ctx: TableContext, options: ApplyOptions) -> ApplyResult:
    started = time.monotonic()
    ctx, cleaned = roll_back_our_leftovers(ctx)
    the_plan, checks, sizing = sized_plan(ctx, options, writing=True)
    notes = [f"rolled back our unfinished rescale {t}" for t in cleaned]
    if options.approved_plan and options.approved_plan != the_plan.plan_id:
        found = PlanResult(
            the_plan.reported(),
            checks.to_dict(),
            None if sizing is None else sizing.reported(max_choices=TABLE_ITEMS).to_dict(),
        )
        raise PlanNotApprovedError(
            f"the plan is {the_plan.plan_id}, but {options.approved_plan} was approved",
            result=found,
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
