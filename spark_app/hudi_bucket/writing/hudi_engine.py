"""The Hudi engine: a planned rescale carried out by Hudi's own ``partition_bucket_index_manager``
procedure, in the job's Spark session (Hudi's Spark bundle on its classpath, see spark.session).

Hudi's procedure writes the new hashing_config and one replacecommit of bulk-inserted file groups, and
keeps the metadata table (files, column stats, record and secondary indexes) in sync; it reads
MERGE_ON_READ file slices, logs included, through Hudi's file group reader. What stays ours: the plan
and its approval, preflight, the check that no other writer committed meanwhile, and the report.
"""

from __future__ import annotations

import hashlib
from typing import Any

from hudi_bucket.core.commits import WriteStat
from hudi_bucket.core.metadata_indexes import MetadataIndexes
from hudi_bucket.core.planning import ChangeReason, Plan
from hudi_bucket.core.preflight import completed_after
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.core.timeline import Action, Timeline
from hudi_bucket.errors import (
    ConcurrentWriterError,
    HudiEngineError,
    HudiEngineUnavailableError,
    PlanError,
)
from hudi_bucket.hudi.table import timeline_store
from hudi_bucket.spark.context import TableContext
from hudi_bucket.spark.session import on_classpath, run_sql

PROCEDURE = "partition_bucket_index_manager"
_EXTENSION = "org.apache.spark.sql.hudi.HoodieSparkSessionExtension"
_PROCEDURE_CLASS = "org.apache.spark.sql.hudi.command.procedures.PartitionBucketIndexManager"


# A metadata table partition (an index) -> the write option that keeps it (Hudi 1.2's keys).
def refuse_what_hudi_cannot_plan(plan: Plan, in_force: Any, repair_hint: str = "") -> None:
    """Refuse a plan Hudi's procedure would carry out wrongly. It rewrites only partitions whose count
    changes, never one laid out against its count (a repair; ``repair_hint`` says what to do instead);
    and it upgrades a table without a hashing_config by taking the new default for every partition's
    current count."""
    converted = sorted(c.partition for c in plan.changes if c.old_buckets is None)
    if converted:
        raise PlanError(
            f"{len(converted)} partition(s) have no bucket layout yet (e.g. {converted[0]!r}); Hudi's "
            "procedure cannot lay them out",
            hint="use the Native engine to convert a table that is not bucket-indexed",
        )
    repairs = sorted(c.partition for c in plan.changes if c.reason is ChangeReason.REPAIR)
    if repairs:
        raise PlanError(
            f"{len(repairs)} partition(s) are not laid out in the buckets their count says (e.g. "
            f"{repairs[0]!r}); Hudi's procedure rewrites only partitions whose count changes",
            hint=repair_hint
            or "use the Native engine, or give a plain bucket-index table's count (currentBuckets, "
            "--current-buckets)",
        )
    others = sorted(
        {
            c.old_buckets
            for c in plan.changes
            if c.old_buckets is not None and c.old_buckets != plan.desired.default
        }
    )
    if in_force is None and others:
        raise PlanError(
            f"the table's partitions have {others[0]} buckets and the rules' default is "
            f"{plan.desired.default}; on a table's first rules, Hudi's procedure takes the default for "
            "every partition's current count",
            hint=f"set the default (buckets.default, --default) to {others[0]} for this first apply, "
            "then change it in a second one",
        )


def rescale_with_hudi(
    spark: Any, ctx: TableContext, plan: Plan, rules: BucketRules
) -> tuple[str, tuple[WriteStat, ...]]:
    """Run Hudi's overwrite rescale for ``rules``; returns Hudi's instant and its write stats."""
    _require_hudi(spark)
    before = ctx.table.timeline
    name = _register(spark, ctx.table.uri)
    keep = index_options(ctx.table.metadata_indexes)
    call = (
        f"CALL {PROCEDURE}(table => {_literal(name)}, overwrite => {_literal(rules.render())}, "
        f"bucket_number => {rules.default}, rule => {_literal(rules.rule_type)}, dry_run => false"
        + (f", options => {_literal(', '.join(f'{k}={v}' for k, v in keep.items()))})" if keep else ")")
    )
    [row] = run_sql(spark, call)
    if row[0] != "SUCCESS":
        raise HudiEngineError(f"{PROCEDURE} answered {row[0]} {row[1]}: {row[2]}")
    after = ctx.reload()
    ours = _the_rescale(before, after.table.timeline, plan)
    store = timeline_store(after.storage, after.table)
    others = [i for i in completed_after(before, after.table.timeline, ours) if i.timestamp != ours]
    if others:  # a writer ignored the "stop writers" rule: undo with Hudi, as the Native engine would
        run_sql(spark, f"CALL {PROCEDURE}(table => {_literal(name)}, rollback => {_literal(ours)})")
        raise ConcurrentWriterError(
            "writers committed during the rescale: "
            + ", ".join(f"{i.timestamp} ({i.action.value})" for i in others[:5])
            + f"; Hudi's rescale {ours} rolled back"
        )
    committed = after.table.timeline.get(ours)
    if committed is None:
        raise ConcurrentWriterError(
            f"Hudi's rescale {ours} is gone from the timeline: another writer rolled it back"
        )
    stats: tuple[WriteStat, ...] = tuple(
        stat for stats in store.read_commit_metadata(committed).write_stats.values() for stat in stats
    )
    return ours, stats


def index_options(indexes: MetadataIndexes) -> dict[str, str]:
    """The write options that keep the table's metadata indexes. Hudi's procedure writes with its own
    configuration, and a Hudi writer deletes an index its configuration does not enable: without these,
    Hudi 1.2.0's rescale drops the record index."""
    return {setting: "true" for setting, on in indexes.settings().items() if on}


def _the_rescale(before: Timeline, after: Timeline, plan: Plan) -> str:
    """The replacecommit Hudi's call completed (the one new one)."""
    known = {i.timestamp for i in before.completed()}
    new = [i for i in after.completed() if i.timestamp not in known and i.action is Action.REPLACE_COMMIT]
    if len(new) != 1:
        raise HudiEngineError(
            f"{PROCEDURE} reported success, but {len(new)} new completed replacecommit(s) are on the "
            f"timeline (expected one, rewriting {len(plan.changes)} partition(s))"
        )
    return new[0].timestamp


def _require_hudi(spark: Any) -> None:
    extensions = spark.conf.get("spark.sql.extensions", "") or ""
    if not on_classpath(spark, _PROCEDURE_CLASS):
        raise HudiEngineUnavailableError("Hudi's Spark bundle is not on the job's classpath")
    if _EXTENSION not in extensions:
        raise HudiEngineUnavailableError(
            f"the job's Spark session runs without Hudi's SQL extension (spark.sql.extensions={extensions!r})"
        )


def _register(spark: Any, uri: str) -> str:
    """The table, named in the session's catalog (Hudi's procedures take a table name, not a path)."""
    name = "hbo_" + hashlib.sha256(uri.encode()).hexdigest()[:16]
    run_sql(spark, f"CREATE TABLE IF NOT EXISTS {name} USING hudi LOCATION {_literal(uri)}")
    return name


def _literal(text: str) -> str:
    """A Spark SQL string literal of ``text`` (patterns hold backslashes, and may hold quotes)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
