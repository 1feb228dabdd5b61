"""`apply` rescales real Hudi tables: hudi-rs reads the same rows, the layout verifies, and a failure or
a crash at any point leaves the table as it was and converges on the next run."""

from __future__ import annotations

import pytest

from hudi_bucket.commands import apply as apply_module
from hudi_bucket.commands.apply import apply
from hudi_bucket.contract.requests import ApplyOptions
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.core.timeline import Action
from hudi_bucket.errors import ConcurrentWriterError, NotBucketIndexedError, PlanError, PreflightError
from hudi_bucket.hudi import config_store
from hudi_bucket.hudi.rollback import rollback
from hudi_bucket.planning import plan
from hudi_bucket.spark import metadata_writer
from hudi_bucket.spark.context import TableContext
from lib.bucket_tables import verified
from lib.crashes import CRASH_POINTS, Crash, crash
from lib.hudi_rs import REWRITTEN, records
from lib.hudi_spark import (
    bucket_options,
    data_rows,
    hudi_read,
    hudi_write,
    metadata_table_listing,
    storage_listing,
)

pytestmark = pytest.mark.spark


def request(expressions: str, default: int, **options: object) -> ApplyOptions:
    return ApplyOptions(BucketRules.parse(expressions, default), **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "expressions", "disable_mdt"),
    [
        ("cow_v6", "^10$,4", False),
        ("cow_v6_complex_hivestyle", "part=10,3", False),
        ("cow_v8", "^(10|20)$,5", False),
        ("cow_v8_nonpartitioned", "x,7", False),
        ("cow_v9", "^30$,3", False),
        ("cow_v9_meta", "part=(10|20),4", True),
    ],
)
def test_convert_then_rescale_keeps_every_row(spark, written_table, name, expressions, disable_mdt) -> None:
    root = written_table(name)
    before = records(root, drop=REWRITTEN)
    ctx = TableContext.open(spark, str(root))

    converted = apply(ctx, request(expressions, 2, convert=True, disable_metadata_table=disable_mdt))
    assert converted.instant is not None
    assert converted.writer_options["hoodie.index.type"] == "BUCKET"  # what writers must switch to
    assert converted.writer_options["hoodie.bucket.index.partition.expressions"] == expressions
    assert records(root, drop=REWRITTEN) == before
    assert verified(ctx)

    # Doubling every bucket count: each new bucket draws from one old bucket, so no shuffle is needed.
    doubled = ";".join(f"{r.pattern},{r.buckets * 2}" for r in BucketRules.parse(expressions, 2).rules)
    rescaled = apply(ctx.reload(), request(doubled, 4))
    assert rescaled.shuffle_free
    assert records(root, drop=REWRITTEN) == before
    assert verified(ctx)

    # Halving back merges pairs of buckets, again task-locally.
    merged = apply(ctx.reload(), request(expressions, 2))
    assert merged.shuffle_free
    assert records(root, drop=REWRITTEN) == before
    assert verified(ctx)


@pytest.mark.parametrize("expressions", ["part=p,4", "part=p,3"], ids=["doubling", "reshuffle"])
def test_one_field_keys_that_hudi_splits_are_bucketed_as_hudi_buckets_them(
    spark, tmp_path, expressions
) -> None:
    # Values holding "," and ":" read to Hudi's bucket index as field:value pairs (it hashes "7" of
    # "key:7,b:1"). The JVM cannot hash those, so the write that tried is removed and redone in Python.
    root = tmp_path / "split_keys"
    keys = [(f"key:{i},b:{i % 3}", "p", i) for i in range(30)] + [(f"plain-{i}", "p", i) for i in range(10)]
    options = bucket_options(
        record_key="key", partition_field="part", ordering_field="ts", table_version=8, buckets=2
    )
    hudi_write(
        spark, root, spark.createDataFrame(keys, "key string, part string, ts long"), options, "insert"
    )
    before = data_rows(hudi_read(spark, root))
    ctx = TableContext.open(spark, str(root))

    done = apply(ctx, request(expressions, 2, current_buckets=2))

    assert done.instant is not None
    assert data_rows(hudi_read(spark, root)) == before
    assert verified(ctx.reload())


def test_a_table_that_is_not_bucket_indexed_needs_convert(spark, written_table) -> None:
    ctx = TableContext.open(spark, str(written_table("cow_v8")))
    with pytest.raises(NotBucketIndexedError, match="--convert"):
        plan(ctx, request("10,4", 2))


def test_converged_tables_are_left_alone(spark, written_table) -> None:
    root = written_table("cow_v8")
    ctx = TableContext.open(spark, str(root))
    apply(ctx, request("^10$,4", 2, convert=True))
    timeline = ctx.reload().table.timeline
    again = apply(ctx.reload(), request("^10$,4", 2))
    assert again.instant is None
    assert again.plan.noop
    assert ctx.reload().table.timeline == timeline


def test_a_rule_for_future_partitions_is_still_committed(spark, written_table) -> None:
    root = written_table("cow_v8")
    ctx = TableContext.open(spark, str(root))
    apply(ctx, request("^10$,4", 2, convert=True))
    before = records(root, drop=REWRITTEN)
    result = apply(ctx.reload(), request("^99$,16;^10$,4", 2))
    assert result.plan.changes == ()
    assert result.instant is not None  # an empty replacecommit carries the new config, as Hudi's does
    table = ctx.reload().table
    assert table.timeline.latest_completed.action is Action.REPLACE_COMMIT
    assert config_store.load_in_force(ctx.storage, frozenset()).expressions == "^99$,16;^10$,4"
    assert records(root, drop=REWRITTEN) == before


def test_an_approved_plan_must_be_the_plan_that_runs(spark, written_table) -> None:
    root = written_table("cow_v8")
    ctx = TableContext.open(spark, str(root))
    the_plan, _ = plan(ctx, request("^10$,4", 2, convert=True))
    with pytest.raises(PlanError, match="was approved"):
        apply(ctx, request("^10$,8", 2, convert=True, approved_plan=the_plan.plan_id))
    assert apply(ctx, request("^10$,4", 2, convert=True, approved_plan=the_plan.plan_id)).instant


def test_a_conversion_keeps_a_live_metadata_table(spark, written_table) -> None:
    root = written_table("cow_v9_meta")
    before = data_rows(hudi_read(spark, root))
    ctx = TableContext.open(spark, str(root))

    converted = apply(ctx, request("part=10,4", 2, convert=True))

    assert converted.instant is not None
    assert "files" in ctx.reload().table.config.metadata_partitions
    assert metadata_table_listing(spark, root) == storage_listing(root)
    assert data_rows(hudi_read(spark, root)) == before
    assert verified(ctx.reload())


def test_a_live_metadata_table_is_refused_where_hudis_metadata_writer_is_missing(
    spark, written_table, monkeypatch
) -> None:
    root = written_table("cow_v9_meta")
    timeline_files = sorted((root / ".hoodie" / "timeline").iterdir())
    monkeypatch.setattr(metadata_writer, "available", lambda spark: False)
    with pytest.raises(PreflightError, match=r"metadata table.*Hudi's Spark bundle"):
        apply(TableContext.open(spark, str(root)), request("part=10,4", 2, convert=True))
    assert sorted((root / ".hoodie" / "timeline").iterdir()) == timeline_files


def test_a_merge_on_read_table_of_the_corpus_is_converted_and_stays_merge_on_read(
    spark, fixture_table
) -> None:
    root = fixture_table("mor_v9_txns_simple_meta")
    before = data_rows(hudi_read(spark, root))
    ctx = TableContext.open(spark, str(root))

    converted = apply(ctx, request("eu,4", 2, convert=True, disable_metadata_table=True))

    assert converted.instant is not None
    assert data_rows(hudi_read(spark, root)) == before  # Hudi merged the log files before, and reads the same
    assert ctx.reload().table.is_merge_on_read
    assert verified(ctx.reload())


@pytest.mark.parametrize("point", list(CRASH_POINTS))
def test_a_crash_leaves_readers_on_the_old_layout_and_the_next_apply_converges(
    spark, written_table, monkeypatch, point
) -> None:
    root = written_table("cow_v6")
    before = records(root, drop=REWRITTEN)
    ctx = TableContext.open(spark, str(root))
    with monkeypatch.context() as crashing:
        crash(crashing, point)
        with pytest.raises(Crash):
            apply(ctx, request("^10$,4", 2, convert=True))

    pending = ctx.reload().table.timeline.pending()
    assert len(pending) == 1
    assert records(root, drop=REWRITTEN) == before  # readers never see a half-done rescale

    result = apply(ctx.reload(), request("^10$,4", 2, convert=True))
    assert f"rolled back our unfinished rescale {pending[0].timestamp}" in result.notes
    assert ctx.reload().table.timeline.pending() == ()
    assert records(root, drop=REWRITTEN) == before
    assert verified(ctx)


def test_a_writer_committing_during_the_rescale_rolls_it_back(spark, written_table, monkeypatch) -> None:
    root = written_table("cow_v8")
    before = records(root, drop=REWRITTEN)
    ctx = TableContext.open(spark, str(root))
    real_rewrite = apply_module.rewrite_partitions

    def rewrite_while_someone_commits(*args: object, **kwargs: object) -> object:
        stats = real_rewrite(*args, **kwargs)
        # Another writer completes a commit to partition 10 while we rewrite it.
        timeline = root / ".hoodie" / "timeline"
        source = next(timeline.glob("*_*.commit"))
        (timeline / "20990101000000000.commit.requested").write_bytes(b"")
        (timeline / "20990101000000000_20990101000000001.commit").write_bytes(source.read_bytes())
        return stats

    monkeypatch.setattr(apply_module, "rewrite_partitions", rewrite_while_someone_commits)
    with pytest.raises(ConcurrentWriterError, match="20990101000000000"):
        apply(ctx, request("^10$,4", 2, convert=True))
    table = ctx.reload().table
    assert [i.action for i in table.timeline.pending()] == []
    assert not config_store.list_instants(ctx.storage)
    assert records(root, drop=REWRITTEN) == before


def test_rollback_of_a_completed_rescale_restores_the_old_layout(spark, written_table) -> None:
    root = written_table("cow_v8")
    ctx = TableContext.open(spark, str(root))
    before_files = sorted(p.name for p in root.rglob("*.parquet"))
    before = records(root, drop=REWRITTEN)
    result = apply(ctx, request("^10$,4", 2, convert=True))

    undone = rollback(ctx.storage, ctx.reload().table, result.instant)
    assert undone.was_completed
    assert undone.config_removed
    assert sorted(p.name for p in root.rglob("*.parquet")) == before_files
    assert records(root, drop=REWRITTEN) == before
    assert ctx.reload().table.timeline.get(result.instant) is None
