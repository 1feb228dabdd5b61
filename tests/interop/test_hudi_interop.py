"""Apache Hudi and our jobs on the same tables, with the partition-level bucket index (RFC-89).

Hudi creates a copy-on-write bucket table and gives it rules with its own procedure; we rescale it
(without and with a shuffle); Hudi's snapshot read returns the same rows; Hudi upserts into rescaled,
untouched and new partitions with the writer options our report prints, and every key stays once, in the
bucket our hash gives it (`verify`); hudi-rs reads what Hudi reads; and Hudi's reader, pruning files by
the bucket of a key, finds it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hudi_bucket.commands.apply import apply
from hudi_bucket.contract.requests import ApplyOptions, RescaleOptions
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.planning import plan
from hudi_bucket.spark.context import TableContext
from lib.bucket_tables import verified
from lib.crashes import CRASH_POINTS, Crash, crash
from lib.hudi_spark import bucket_options, hudi_read, hudi_rs_rows, hudi_sql, hudi_write
from lib.hudi_tables import DAYS, HUDI_RULES, HudiBucketTables, one_record_per_key, records

pytestmark = pytest.mark.spark


@pytest.mark.parametrize(
    ("version", "rules", "full_shuffle"),
    [
        # 4 -> 2 merges, 2 -> 4 splits: no shuffle. (No partition of 1 bucket here: Hudi 1.2.0's reader,
        # given the rules as read options, prunes away every file of such a partition, and does so too
        # when its own procedure did the rescale.)
        (8, "day=2025-11-11,2;day=2025-11-12,4", False),
        (9, "day=2025-11-11,3;day=2025-11-12,5", True),
    ],
)
def test_hudi_upserts_a_table_we_rescaled(
    spark: Any, hudi_tables: HudiBucketTables, tmp_path: Path, version: int, rules: str, full_shuffle: bool
) -> None:
    root = tmp_path / f"orders_v{version}"
    hudi_tables.copy(root, version)
    before = one_record_per_key(spark, root)
    ctx = TableContext.open(spark, str(root))

    result = apply(ctx, ApplyOptions(BucketRules.parse(rules, 2), full_shuffle=full_shuffle))

    assert result.shuffle_free is not full_shuffle
    assert one_record_per_key(spark, root) == before
    assert hudi_rs_rows(root) == before
    assert verified(ctx)

    # Hudi upserts with exactly what our report says: updates in a rescaled and an untouched partition,
    # inserts there and into a new partition.
    options = {
        **result.writer_options,
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "day",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.metadata.enable": "false",
    }
    hudi_write(spark, root, records(spark, range(90, 130), 3), options)
    hudi_write(spark, root, records(spark, range(200, 210), 3, day="2025-11-19"), options)
    after = one_record_per_key(spark, root)
    assert len(after) == 130 + 10
    assert hudi_rs_rows(root) == after
    assert verified(ctx)

    # Point queries through Hudi's reader, files pruned to the key's bucket (PartitionBucketIndexSupport).
    skipping = {"hoodie.enable.data.skipping": "true", **options}
    for key in (97, 98, 96, 205):  # days 11 and 12 rescaled, 10 untouched, 19 new
        found = hudi_read(spark, root, **skipping).where(f"id = {key}")
        assert [r.id for r in found.collect()] == [key]


def test_hudi_procedure_sees_our_config_and_we_see_its_rescale(
    spark: Any, hudi_tables: HudiBucketTables, tmp_path: Path
) -> None:
    root = tmp_path / "procedure"
    hudi_tables.copy(root, 9)
    ctx = TableContext.open(spark, str(root))

    # A rescale by Hudi's procedure is converged for our plan of the same rules.
    converged, _ = plan(ctx, RescaleOptions(BucketRules.parse(HUDI_RULES, 2)))
    assert converged.is_noop

    # Its dry run of our rules names the partitions and counts our plan changes.
    ours = "day=2025-11-1[23],6"
    our_plan, _ = plan(ctx, RescaleOptions(BucketRules.parse(ours, 2)))
    [dry] = hudi_sql(
        spark, root, f"call partition_bucket_index_manager(table => '{{table}}', overwrite => '{ours}')"
    )
    named = {p.strip(): int(n) for p, _, n in (item.strip().partition(" => ") for item in dry[2].split(";"))}
    assert named == {c.partition: c.new_buckets for c in our_plan.changes}

    # After our apply, it shows our hashing_config.
    applied = apply(ctx, ApplyOptions(BucketRules.parse(ours, 2)))
    [shown] = hudi_sql(
        spark, root, "call partition_bucket_index_manager(table => '{table}', show_config => true)"
    )
    ours_shown = (
        f"expressions={ours}, defaultBucketNumber=2, rule=regex, version=1, instant={applied.instant})"
    )
    assert shown[2].endswith(ours_shown)  # the newest of the versions it lists


CLEAN_AND_ARCHIVE_EACH_COMMIT = {
    "hoodie.clean.automatic": "true",
    "hoodie.cleaner.commits.retained": "1",
    "hoodie.keep.min.commits": "2",
    "hoodie.keep.max.commits": "3",
}


@pytest.mark.parametrize("version", [6, 8, 9])
def test_hudi_cleans_and_archives_after_our_replacecommits(spark: Any, tmp_path: Path, version: int) -> None:
    root = tmp_path / f"cleaned_v{version}"
    options = bucket_options(
        record_key="id", partition_field="day", ordering_field="ts", table_version=version, buckets=2
    )
    hudi_write(spark, root, records(spark, range(40), 1), options)
    ctx = TableContext.open(spark, str(root))
    first = apply(ctx, ApplyOptions(BucketRules.parse("day=2025-11-11,4", 2), current_buckets=2))
    second = apply(ctx.reload(), ApplyOptions(BucketRules.parse("day=2025-11-1[12],4", 2)))
    replaced = {p: set((root / p).glob("*.parquet")) for p in DAYS}

    writer = {**second.writer_options, **options, **CLEAN_AND_ARCHIVE_EACH_COMMIT}
    for ts in range(2, 7):
        hudi_write(spark, root, records(spark, range(30, 50), ts), writer)

    rows = one_record_per_key(spark, root)
    assert len(rows) == 50
    assert hudi_rs_rows(root) == rows
    for partition, files in replaced.items():  # every file of the rescaled layouts' predecessors is gone
        if partition in ("day=2025-11-11", "day=2025-11-12"):
            assert not any(
                f.exists() for f in files if first.instant not in f.name and second.instant not in f.name
            )
    timeline = ctx.reload().table.timeline
    assert first.instant not in {i.timestamp for i in timeline.instants}  # archived by Hudi
    assert plan(ctx.reload(), RescaleOptions(BucketRules.parse("day=2025-11-1[12],4", 2)))[0].is_noop
    assert verified(ctx)


@pytest.mark.parametrize("point", list(CRASH_POINTS))
def test_hudi_reads_and_writes_after_our_apply_crashed(
    spark: Any, hudi_tables: HudiBucketTables, tmp_path: Path, monkeypatch, point: str
) -> None:
    root = tmp_path / "crashed"
    options = hudi_tables.copy(root, 9)
    before = one_record_per_key(spark, root)
    ctx = TableContext.open(spark, str(root))
    with monkeypatch.context() as crashing:
        crash(crashing, point)
        with pytest.raises(Crash):
            apply(ctx, ApplyOptions(BucketRules.parse("day=2025-11-1[01],8", 2)))
    assert one_record_per_key(spark, root) == before

    # Hudi's writer (eager failed-writes cleaning, its default) rolls our leftover back, then upserts.
    hudi_write(spark, root, records(spark, range(90, 110), 5), options)
    after = one_record_per_key(spark, root)
    assert len(after) == 110
    assert ctx.reload().table.timeline.pending() == ()
    assert hudi_rs_rows(root) == after
    assert verified(ctx)
