"""`apply --check-records` repairs what `verify` finds, with the rules unchanged: a record in the wrong
bucket, a key in two buckets (the version Hudi's merge would keep wins), two file groups of one bucket.
One replacecommit mends them all; then verify passes, and Hudi and hudi-rs read every key once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hudi_bucket.commands.apply import apply
from hudi_bucket.commands.verify import verify
from hudi_bucket.contract.requests import ApplyOptions, RescaleOptions
from hudi_bucket.core.planning import ChangeReason
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.errors import CustomMergeError, LayoutViolationError, PlanError
from hudi_bucket.planning import plan
from hudi_bucket.spark import metadata_writer
from hudi_bucket.spark.context import TableContext
from hudi_bucket.storage import LocalStorage
from lib import bucket_tables
from lib.hudi_spark import hudi_rs_rows
from lib.hudi_tables import HUDI_RULES, WITH_INDEXES, HudiBucketTables, one_record_per_key

pytestmark = pytest.mark.spark

RULES = BucketRules.parse(HUDI_RULES, 2)  # the table's own: nothing to rescale
MOVED, COPIED, SPLIT, UNTOUCHED = "day=2025-11-10", "day=2025-11-11", "day=2025-11-12", "day=2025-11-13"


def violations(ctx: TableContext) -> set[tuple[str, str]]:
    with pytest.raises(LayoutViolationError) as found:
        verify(ctx.reload())
    assert found.value.result is not None  # the check it found, for the report
    return {(v["partition"], v["kind"]) for v in found.value.result.to_dict()["violations"]}


@pytest.mark.parametrize(
    ("ts", "name", "copy_wins"),
    [
        (99, "copy", True),  # the copy's ordering value is greater: it wins, though in the wrong bucket
        (0, "copy", False),  # committed later, but its ordering value is less: the stored record stays
    ],
)
def test_apply_repairs_every_violation_verify_finds_in_one_replacecommit(
    spark: Any, hudi_tables: HudiBucketTables, tmp_path: Path, ts: int, name: str, copy_wins: bool
) -> None:
    root = tmp_path / "orders"
    hudi_tables.copy(root, 9)
    before = one_record_per_key(spark, root)
    ctx = TableContext.open(spark, str(root))

    bucket_tables.break_by_moving_a_record(root, MOVED)
    _, key = bucket_tables.break_by_copying_a_record(root, COPIED, ts=ts, name=name)
    bucket_tables.break_by_splitting_a_bucket(root, SPLIT)

    assert violations(ctx) == {
        (MOVED, "misplaced-records"),
        (COPIED, "misplaced-records"),
        (SPLIT, "duplicate-bucket"),
    }
    # Without reading records, the plan sees only what the file ids show.
    by_ids, _ = plan(ctx.reload(), RescaleOptions(RULES))
    assert [(c.partition, c.reason) for c in by_ids.changes] == [(SPLIT, ChangeReason.REPAIR)]
    checked, _ = plan(ctx.reload(), RescaleOptions(RULES, check_records=True))
    assert [(c.partition, c.reason) for c in checked.changes] == [
        (MOVED, ChangeReason.REPAIR),
        (COPIED, ChangeReason.REPAIR),
        (SPLIT, ChangeReason.REPAIR),
    ]
    assert not checked.config_changes
    assert len(checked.repairs) == 3

    result = apply(ctx.reload(), ApplyOptions(RULES, check_records=True, approved_plan=checked.plan_id))

    assert result.instant is not None
    assert result.partitions_repaired == 3
    assert result.duplicates_resolved == 1
    assert not result.shuffle_free
    assert verify(ctx.reload()).ok
    expected = sorted(
        (day, i, name, ts) if copy_wins and str(i) == key and f"day={day}" == COPIED else (day, i, n, t)
        for day, i, n, t in before
    )
    expected.sort(key=repr)  # as the readers' rows are sorted
    assert one_record_per_key(spark, root) == expected
    assert hudi_rs_rows(root) == expected
    again, _ = plan(ctx.reload(), RescaleOptions(RULES, check_records=True))
    assert again.is_noop


def test_an_approval_of_the_plan_without_the_record_check_does_not_apply_a_repair(
    spark: Any, hudi_tables: HudiBucketTables, tmp_path: Path
) -> None:
    from hudi_bucket.errors import PlanNotApprovedError

    root = tmp_path / "orders"
    hudi_tables.copy(root, 9)
    ctx = TableContext.open(spark, str(root))
    bucket_tables.break_by_moving_a_record(root, MOVED)
    unchecked, _ = plan(ctx.reload(), RescaleOptions(RULES))
    assert unchecked.is_noop

    with pytest.raises(PlanNotApprovedError):
        apply(ctx.reload(), ApplyOptions(RULES, check_records=True, approved_plan=unchecked.plan_id))
    assert violations(ctx) == {(MOVED, "misplaced-records")}


def test_engine_auto_repairs_with_native_keeping_the_metadata_table_and_says_how_otherwise(
    spark: Any, hudi_tables: HudiBucketTables, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "indexed"
    hudi_tables.copy(root, 9, WITH_INDEXES)
    before = one_record_per_key(spark, root)
    bucket_tables.break_by_splitting_a_bucket(root, SPLIT)
    ctx = TableContext.open(spark, str(root))

    # Without Hudi's metadata writer, a live metadata table makes Auto choose Hudi, which repairs nothing.
    with monkeypatch.context() as without_writer:
        without_writer.setattr(metadata_writer, "available", lambda spark: False)
        with pytest.raises(PlanError, match="repair") as refused:
            plan(ctx.reload(), RescaleOptions(RULES, check_records=True))
    assert "metadataTable: Disable" in refused.value.hint

    result = apply(ctx.reload(), ApplyOptions(RULES, check_records=True))

    assert result.partitions_repaired == 1
    assert "files" in ctx.reload().table.config.metadata_partitions
    assert verify(ctx.reload()).ok
    assert one_record_per_key(spark, root) == before
    assert hudi_rs_rows(root) == before


def test_a_key_in_two_file_groups_of_a_table_with_a_custom_merge_is_not_guessed(
    spark: Any, hudi_tables: HudiBucketTables, tmp_path: Path
) -> None:
    root = tmp_path / "orders"
    hudi_tables.copy(root, 9)
    storage = LocalStorage(root)
    properties = storage.read(".hoodie/hoodie.properties").decode()
    custom = properties.replace(
        "hoodie.record.merge.mode=EVENT_TIME_ORDERING", "hoodie.record.merge.mode=CUSTOM"
    )
    assert custom != properties
    storage.write(".hoodie/hoodie.properties", custom.encode(), overwrite=True)
    bucket_tables.break_by_copying_a_record(root, COPIED, ts=99)
    ctx = TableContext.open(spark, str(root))

    with pytest.raises(CustomMergeError, match="1 key"):
        apply(ctx, ApplyOptions(RULES, check_records=True))
    assert violations(ctx) == {(COPIED, "misplaced-records")}  # rolled back: as it was
