"""The Hudi engine: tables with a live metadata table and its indexes, and MERGE_ON_READ with log files,
rescaled by Hudi's own procedure inside our apply, then read and upserted by Hudi; and Auto keeping the
Native engine where it can (tests/interop/test_metadata_table_kept.py: Native with a metadata table)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hudi_bucket.commands.apply import apply
from hudi_bucket.commands.verify import verify
from hudi_bucket.contract.requests import ApplyOptions, RescaleOptions
from hudi_bucket.core.engine import Engine
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.errors import PlanError, PreflightError
from hudi_bucket.planning import plan
from hudi_bucket.spark.context import TableContext
from hudi_bucket.spark.session import scoped_conf
from lib.bucket_tables import verified
from lib.hudi_spark import (
    bucket_options,
    hudi_read,
    hudi_rs_rows,
    hudi_sql,
    hudi_write,
    reset_bucket_calculator,
)
from lib.hudi_tables import (
    MERGE_ON_READ,
    WITH_INDEXES,
    HudiBucketTables,
    one_record_per_key,
    read_alike_everywhere,
    records,
)

RULES = BucketRules.parse("day=2025-11-1[23],6", 2)
KEYS = (97, 98, 96)  # days 11 (4 -> 2 buckets), 12 (2 -> 6), 10 (2, untouched)

CREATE_INDEX = "CREATE INDEX idx_name ON {table} (name)"  # a secondary index
SINGLE_WRITER_LOCK = {
    "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.InProcessLockProvider"
}


def index_sql(spark: Any, root: Path, statement: str) -> None:
    with scoped_conf(spark, SINGLE_WRITER_LOCK):  # Hudi builds and drops indexes as table services
        hudi_sql(spark, root, statement)


def rescaled(spark: Any, root: Path, engine: Engine = Engine.AUTO) -> tuple[Any, Any]:
    ctx = TableContext.open(spark, str(root))
    reset_bucket_calculator(spark, root, {})  # Hudi 1.2.0's calculator cache, see hudi_spark
    return ctx, apply(ctx, ApplyOptions(RULES, engine=engine))


def test_a_table_with_a_metadata_table_and_its_indexes_is_rescaled_by_hudi(
    spark: Any, hudi_tables: HudiBucketTables, tmp_path: Path
) -> None:
    root = tmp_path / "orders_mdt"
    options = hudi_tables.copy(root, 9, WITH_INDEXES)
    before = one_record_per_key(spark, root)
    indexes = TableContext.open(spark, str(root)).table.config.metadata_partitions
    assert "record_index" in indexes
    # Hudi's procedure cannot overwrite a table with a secondary index: refused before anything is written.
    index_sql(spark, root, CREATE_INDEX)
    timeline = sorted((root / ".hoodie" / "timeline").iterdir())
    with pytest.raises(PreflightError, match="DROP INDEX idx_name"):
        rescaled(spark, root, Engine.HUDI)
    assert sorted((root / ".hoodie" / "timeline").iterdir()) == timeline
    index_sql(spark, root, "DROP INDEX idx_name ON {table}")

    ctx, result = rescaled(spark, root, Engine.HUDI)

    assert result.instant is not None
    assert any("partition_bucket_index_manager" in note for note in result.notes)
    assert set(indexes) <= set(ctx.reload().table.config.metadata_partitions)  # every index kept
    changes = {c.partition: (c.old_buckets, c.new_buckets) for c in result.plan.changes}
    assert changes == {"day=2025-11-11": (4, 2), "day=2025-11-12": (2, 6), "day=2025-11-13": (2, 6)}
    read_alike_everywhere(spark, root, before)
    assert verified(ctx)
    # The record index finds every key in its new file group.
    lookup = {**options, "hoodie.enable.data.skipping": "true"}
    for key in KEYS:
        assert [r.id for r in hudi_read(spark, root, **lookup).where(f"id = {key}").collect()] == [key]
    # A secondary index built again after it leads a query by name to the right file group.
    index_sql(spark, root, CREATE_INDEX)
    by_name = hudi_read(spark, root, **lookup).where("name = 'n97-2'").collect()
    assert [r.id for r in by_name] == [97]
    # Hudi upserts after it: updates and inserts, one record per key.
    hudi_write(spark, root, records(spark, range(90, 130), 3), {**options, **result.writer_options})
    assert len(one_record_per_key(spark, root)) == 130


def test_a_merge_on_read_table_with_log_files_is_rescaled_by_hudi(
    spark: Any, hudi_tables: HudiBucketTables, tmp_path: Path
) -> None:
    root = tmp_path / "orders_mor"
    options = hudi_tables.copy(root, 9, MERGE_ON_READ)
    assert list(root.rglob(".*.log.*")), "the upsert wrote log files"
    before = one_record_per_key(spark, root)

    ctx, result = rescaled(spark, root)

    assert result.instant is not None
    assert one_record_per_key(spark, root) == before  # the log files' updates are in the new base files
    assert hudi_rs_rows(root) == before
    assert verified(ctx)
    assert list((root / "day=2025-11-10").glob(".*.log.*")), "an untouched day keeps its logs"
    assert verify(ctx.reload()).unread_log_files == 0  # verify read them through Hudi
    hudi_write(spark, root, records(spark, range(90, 130), 4), {**options, **result.writer_options})
    after = one_record_per_key(spark, root)
    assert len(after) == 130
    assert {r[1]: r[3] for r in after}[97] == 4  # columns sorted: day, id, name, ts


def test_auto_keeps_the_native_engine_for_a_copy_on_write_table_without_a_metadata_table(
    spark: Any, hudi_tables: HudiBucketTables, tmp_path: Path
) -> None:
    root = tmp_path / "orders_v9"
    hudi_tables.copy(root, 9)
    the_plan, checks = plan(TableContext.open(spark, str(root)), RescaleOptions(RULES))
    assert checks.engine is Engine.NATIVE
    assert all(c.shuffle_free for c in the_plan.changes)
    result = apply(TableContext.open(spark, str(root)), ApplyOptions(RULES))
    assert not any("partition_bucket_index_manager" in note for note in result.notes)


def test_the_hudi_engine_refuses_a_first_apply_it_would_carry_out_wrongly(spark: Any, tmp_path: Path) -> None:
    # A plain bucket-index table (2 buckets, no hashing_config): Hudi's procedure would take the new
    # default for every partition's current count.
    root = tmp_path / "plain_bucket_table"
    options = bucket_options(
        record_key="id", partition_field="day", ordering_field="ts", table_version=9, buckets=2
    )
    hudi_write(spark, root, records(spark, range(40), 1), options)
    ctx = TableContext.open(spark, str(root))
    rules = BucketRules.parse("day=2025-11-12,6", 4)
    with pytest.raises(PlanError, match="set the default") as refused:
        plan(ctx, RescaleOptions(rules, current_buckets=2, engine=Engine.HUDI))
    assert "to 2" in refused.value.hint
    first = BucketRules.parse("day=2025-11-12,6", 2)
    the_plan, checks = plan(ctx, RescaleOptions(first, current_buckets=2, engine=Engine.HUDI))
    assert (checks.engine, [c.partition for c in the_plan.changes]) == (Engine.HUDI, ["day=2025-11-12"])
