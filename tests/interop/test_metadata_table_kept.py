"""The Native engine keeps a live metadata table in the same instant (Hudi's own metadata writer, from the
job's session): Apache Hudi writes tables (versions 6, 8 and 9, copy-on-write and MERGE_ON_READ, bucket
tables and tables to convert) with its metadata table and indexes on (files, column stats, partition
stats, the record index; a secondary index), Auto picks Native (Hudi's procedure for a partitioned
record index), and after the rescale or conversion the metadata table lists what storage holds, data skipping and the record index find every key in its new
file group, Hudi's reads, hudi-rs and Hudi's upserts agree. A failure after the metadata table's delta
commit rolls both back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hudi_bucket.commands.apply import apply
from hudi_bucket.contract.requests import ApplyOptions
from hudi_bucket.core.engine import Engine
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.errors import PreflightError
from hudi_bucket.hudi.timeline_io import TimelineStore
from hudi_bucket.spark.context import TableContext
from hudi_bucket.spark.session import scoped_conf
from lib.bucket_tables import verified
from lib.hudi_spark import (
    bucket_options,
    column_stats_entries,
    hudi_read,
    hudi_sql,
    hudi_write,
    keys_the_bloom_filters_miss,
    metadata_table_listing,
    record_file_groups,
    record_index,
    reset_bucket_calculator,
    storage_listing,
)
from lib.hudi_tables import (
    MERGE_ON_READ,
    WITH_INDEXES,
    HudiBucketTables,
    one_record_per_key,
    read_alike_everywhere,
    records,
)

pytestmark = pytest.mark.spark

RULES = BucketRules.parse("day=2025-11-11,8;day=2025-11-1[23],3", 2)  # 4 -> 8, 2 -> 3 (a shuffle)
PARTITIONED_RECORD_INDEX = {
    **{k: v for k, v in WITH_INDEXES.items() if "global" not in k},
    "hoodie.metadata.record.level.index.enable": "true",
}
SINGLE_WRITER_LOCK = {
    "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.InProcessLockProvider"
}


def metadata_timeline(root: Path) -> list[str]:
    """The metadata table's instant files (layout 2 in ``.hoodie/timeline``, layout 1 in ``.hoodie``)."""
    folder = root / ".hoodie" / "metadata" / ".hoodie"
    return sorted(p.name for p in [*folder.glob("*commit*"), *(folder / "timeline").glob("*commit*")])


def written(
    hudi_tables: HudiBucketTables, root: Path, version: int, extra: dict[str, str] | None = None
) -> dict[str, str]:
    """A copy of the bucket table Hudi 1.2.0 wrote with its metadata table and indexes
    (``HudiBucketTables``, ``WITH_INDEXES``)."""
    return hudi_tables.copy(root, version, {**(extra or {}), **WITH_INDEXES})


def rescaled(spark: Any, root: Path) -> tuple[TableContext, Any]:
    ctx = TableContext.open(spark, str(root))
    reset_bucket_calculator(spark, root, {})  # Hudi 1.2.0's calculator cache, see hudi_spark
    return ctx, apply(ctx, ApplyOptions(RULES))


@pytest.mark.parametrize(
    ("version", "extra"),
    [(6, {}), (6, MERGE_ON_READ), (8, {}), (9, {}), (9, MERGE_ON_READ)],
    ids=["cow_v6", "mor_v6", "cow_v8", "cow_v9", "mor_v9"],
)
def test_the_native_engine_keeps_the_metadata_table_and_its_indexes(
    spark: Any, hudi_tables: HudiBucketTables, tmp_path: Path, version: int, extra: dict[str, str]
) -> None:
    root = tmp_path / "orders"
    options = written(hudi_tables, root, version, extra)
    before = one_record_per_key(spark, root)
    if version == 9:
        with scoped_conf(spark, SINGLE_WRITER_LOCK):  # Hudi builds indexes as table services
            hudi_sql(spark, root, "CREATE INDEX idx_name ON {table} (name)")
    indexes = TableContext.open(spark, str(root)).table.config.metadata_partitions
    assert {"files", "column_stats", "bloom_filters", "record_index"} <= set(indexes)
    groups, indexed = record_file_groups(spark, root), record_index(spark, root)

    ctx, result = rescaled(spark, root)

    assert result.instant is not None
    assert any("kept in the same instant" in note for note in result.notes), result.notes  # Native
    assert set(indexes) <= set(ctx.reload().table.config.metadata_partitions)
    assert f"{result.instant}.deltacommit" in " ".join(metadata_timeline(root))
    read_alike_everywhere(spark, root, before)
    assert hudi_sql(spark, root, "call validate_metadata_table_files(table => '{table}')") == []
    assert verified(ctx)
    # The record index finds every record the rescale moved in its new file group, and says of the others
    # what it said before (on MERGE_ON_READ, Hudi 1.2.0's index lacks the inserts its upsert logged).
    moved = {key: group for key, group in record_file_groups(spark, root).items() if group != groups[key]}
    assert moved
    assert record_index(spark, root) == {**indexed, **moved}
    # Column stats, the record index and the secondary index prune files to the new file groups: every
    # key found where it now lives, as without data skipping.
    skipping = {**options, "hoodie.enable.data.skipping": "true"}
    keys = [r[1] for r in before]  # columns sorted: day, id, name, ts
    for where in (f"id IN ({', '.join(map(str, keys))})", "id BETWEEN 20 AND 60", "name = 'n97-2'"):
        found = sorted(r.id for r in hudi_read(spark, root, **skipping).where(where).collect())
        assert found == sorted(r[1] for r in before if _matches(where, r)), where
    # Hudi upserts after it with our writer options: one record per key, and the metadata table follows.
    hudi_write(spark, root, records(spark, range(90, 130), 3), {**options, **result.writer_options})
    assert len(one_record_per_key(spark, root)) == 130
    assert metadata_table_listing(spark, root) == storage_listing(root)


@pytest.mark.parametrize(
    ("version", "extra"),
    [(6, {}), (8, {**MERGE_ON_READ, "hoodie.parquet.small.file.limit": "0"}), (9, {})],
    ids=["cow_v6", "mor_v8", "cow_v9"],
)
def test_a_conversion_keeps_the_metadata_table_and_indexes_every_key_in_its_bucket(
    spark: Any, tmp_path: Path, version: int, extra: dict[str, str]
) -> None:
    root = tmp_path / "orders"
    options = {
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "day",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.write.table.version": str(version),
        **extra,
        **WITH_INDEXES,
    }
    hudi_write(spark, root, records(spark, range(80), 1), options)
    hudi_write(spark, root, records(spark, range(60, 100), 2), options)  # MERGE_ON_READ: into log files
    assert bool(list(root.glob("day=*/.*.log.*"))) == bool(extra)
    before = one_record_per_key(spark, root)
    ctx = TableContext.open(spark, str(root))
    indexes = ctx.table.config.metadata_partitions

    result = apply(ctx, ApplyOptions(RULES, convert=True))

    assert result.instant is not None
    assert any("kept in the same instant" in note for note in result.notes), result.notes
    assert set(indexes) <= set(ctx.reload().table.config.metadata_partitions)
    assert f"{result.instant}.deltacommit" in " ".join(metadata_timeline(root))
    read_alike_everywhere(spark, root, before)
    assert hudi_sql(spark, root, "call validate_metadata_table_files(table => '{table}')") == []
    assert verified(ctx)
    # Every key now lives in a file group of ours, and the record index says so (log inserts included:
    # the conversion wrote them into base files).
    groups = record_file_groups(spark, root)
    assert len(groups) == 100
    assert record_index(spark, root) == groups
    writer = {**options, **result.writer_options}
    hudi_write(spark, root, records(spark, range(90, 130), 3), writer)
    assert len(one_record_per_key(spark, root)) == 130
    assert metadata_table_listing(spark, root) == storage_listing(root)


def test_a_partitioned_record_index_is_kept_by_hudis_procedure_and_never_filed_as_global(
    spark: Any, hudi_tables: HudiBucketTables, tmp_path: Path
) -> None:
    """Told the global kind, Hudi's metadata writer filed half the moved keys where readers of the
    partitioned kind never look; Native cannot keep this kind (Hudi 1.2.0's writer fails on it outside
    its write client), so Native refuses it and Auto gives it to Hudi's procedure, told its kind."""
    root = tmp_path / "orders"
    hudi_tables.copy(root, 9, PARTITIONED_RECORD_INDEX)
    before, files = one_record_per_key(spark, root), storage_listing(root)
    ctx = TableContext.open(spark, str(root))
    assert ctx.table.record_index_partitioned
    assert record_index(spark, root, partitioned=True) == record_file_groups(spark, root)

    with pytest.raises(PreflightError, match="record index is partitioned"):
        apply(ctx, ApplyOptions(RULES, engine=Engine.NATIVE))
    assert storage_listing(root) == files

    ctx, result = rescaled(spark, root)  # Auto

    assert any("partition_bucket_index_manager" in note for note in result.notes), result.notes
    assert ctx.reload().table.record_index_partitioned
    read_alike_everywhere(spark, root, before)
    assert record_index(spark, root, partitioned=True) == record_file_groups(spark, root)
    assert storage_listing(root) != files


def test_bloom_filters_and_an_expression_index_are_kept(
    spark: Any, hudi_tables: HudiBucketTables, tmp_path: Path
) -> None:
    root = tmp_path / "orders"
    options = written(hudi_tables, root, 9)
    before = one_record_per_key(spark, root)
    with scoped_conf(spark, SINGLE_WRITER_LOCK):
        hudi_sql(
            spark, root, "CREATE INDEX idx_upper ON {table} USING column_stats(name) OPTIONS(expr='upper')"
        )
    indexes = TableContext.open(spark, str(root)).table.config.metadata_partitions
    assert {"bloom_filters", "expr_index_idx_upper"} <= set(indexes), indexes
    assert keys_the_bloom_filters_miss(spark, root) == []
    assert set(column_stats_entries(spark, root, "name").values()) == {2}

    ctx, result = rescaled(spark, root)

    assert any("kept in the same instant" in note for note in result.notes), result.notes  # Native
    assert set(indexes) <= set(ctx.reload().table.config.metadata_partitions)
    read_alike_everywhere(spark, root, before)
    assert hudi_sql(spark, root, "call validate_metadata_table_files(table => '{table}')") == []
    assert keys_the_bloom_filters_miss(spark, root) == []  # every new file's filter, from its footer
    # Each new file has its column stats of name twice: the column_stats index's, the expression index's.
    assert set(column_stats_entries(spark, root, "name").values()) == {2}
    # The expression index prunes to the new file groups: a query on upper(name) finds what a full read finds.
    skipping = {**options, "hoodie.enable.data.skipping": "true"}
    found = hudi_read(spark, root, **skipping).where("upper(name) = 'N97-2'").collect()
    assert sorted(r.id for r in found) == sorted(r[1] for r in before if r[2] == "n97-2")


def _matches(where: str, row: tuple) -> bool:
    _, key, name, _ = row
    if where.startswith("id IN"):
        return True
    if where.startswith("id BETWEEN"):
        return 20 <= key <= 60
    return bool(name == "n97-2")


@pytest.mark.parametrize("version", [6, 9])
def test_a_failure_after_the_metadata_tables_delta_commit_rolls_both_back(
    spark: Any, hudi_tables: HudiBucketTables, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: int
) -> None:
    root = tmp_path / "orders"
    written(hudi_tables, root, version)
    before = one_record_per_key(spark, root)
    files, deltacommits = storage_listing(root), metadata_timeline(root)

    def fail(*args: object, **kwargs: object) -> None:
        raise OSError("the completed instant could not be saved")

    monkeypatch.setattr(TimelineStore, "complete", fail)
    with pytest.raises(OSError, match="could not be saved"):
        rescaled(spark, root)
    monkeypatch.undo()

    # The metadata table's delta commit was rolled back with Hudi's own rollback before our instant left
    # the timeline: it lists what it listed, and storage holds what it held.
    assert storage_listing(root) == files
    assert metadata_table_listing(spark, root) == files
    assert [t for t in metadata_timeline(root) if t.endswith(".deltacommit")] == [
        t for t in deltacommits if t.endswith(".deltacommit")
    ]
    assert one_record_per_key(spark, root) == before
    # And the next apply rescales.
    _, result = rescaled(spark, root)
    assert result.instant is not None
    assert metadata_table_listing(spark, root) == storage_listing(root)


def test_first_rules_that_move_no_record_keep_the_metadata_table(spark: Any, tmp_path: Path) -> None:
    root = tmp_path / "orders"
    options = bucket_options(
        record_key="id",
        partition_field="day",
        ordering_field="ts",
        table_version=9,
        buckets=2,
        **WITH_INDEXES,
    )
    hudi_write(spark, root, records(spark, range(40), 1), options)
    files = storage_listing(root)

    result = apply(
        TableContext.open(spark, str(root)), ApplyOptions(BucketRules.parse("day=2025-11-1[123],2", 2))
    )

    assert result.instant is not None  # the first hashing_config, in a replacecommit of no files
    assert storage_listing(root) == files
    assert f"{result.instant}.deltacommit" in " ".join(metadata_timeline(root))
    assert metadata_table_listing(spark, root) == files
    assert record_index(spark, root) == record_file_groups(spark, root)
