"""``verify`` finds every way a table's files can disagree with its bucket counts, and nothing else."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hudi_bucket.checks.layout_check import VerifyResult, Violation, ViolationKind, verify_table
from hudi_bucket.contract.reports import JobReport, Outcome
from hudi_bucket.contract.requests import JobKind
from hudi_bucket.core.buckets import is_bucket_file_id
from hudi_bucket.core.recordkeys import KeyStyle
from hudi_bucket.errors import InvalidBucketCountError
from hudi_bucket.hudi.fs_view import list_partitions
from hudi_bucket.hudi.table import load_table
from hudi_bucket.storage import LocalStorage
from lib import bucket_tables
from lib.hudi_rs import records
from lib.written_tables import ROWS

pytestmark = pytest.mark.spark

MakeTable = Callable[[str], Path]
# A table with a metadata table (written_tables: 15 rows, 6 file groups), and the bucket counts we lay its
# partitions out with.
TXNS = "cow_v9_meta"
TXNS_BUCKETS = {"part=10": 2, "part=20": 3, "part=30": 4}


def verify(spark: Any, root: Path, buckets: Any, **options: Any) -> VerifyResult:
    storage = LocalStorage(root)
    table = load_table(storage)
    return verify_table(
        spark,
        storage,
        table,
        rules_for_partition=buckets,
        hash_fields=table.config.record_key_fields,
        key_style=KeyStyle.HUDI_1X,
        **options,
    )


def kinds_by_file(result: VerifyResult) -> dict[tuple[str, str], set[ViolationKind]]:
    found: dict[tuple[str, str], set[ViolationKind]] = {}
    for v in result.violations:
        found.setdefault((v.partition, v.file_id), set()).add(v.kind)
    return found


@pytest.fixture
def txns_in_buckets(written_table: MakeTable) -> Path:
    root = written_table(TXNS)
    bucket_tables.lay_out_in_buckets(root, TXNS_BUCKETS)
    return root


@pytest.mark.parametrize(
    "name",
    [
        TXNS,
        "cow_v9",
        "cow_v8_nonpartitioned",
        "cow_v6_complex_hivestyle",
        "cow_v6",
        "cow_v6_overwritten",
    ],
)
def test_a_table_laid_out_in_buckets_verifies_ok_and_reads_the_same(
    spark: Any, written_table: MakeTable, name: str
) -> None:
    root = written_table(name)
    before = records(root)
    partitions = list_partitions(LocalStorage(root))
    buckets = {p: 2 + i for i, p in enumerate(partitions)}

    bucket_tables.lay_out_in_buckets(root, buckets)
    result = verify(spark, root, buckets)

    assert result.ok, result.to_dict()
    groups = bucket_tables.live_groups(root)
    assert all(is_bucket_file_id(g.file_id) for gs in groups.values() for g in gs)
    assert result.checked_partitions == len(partitions)
    assert result.checked_file_groups == sum(len(gs) for gs in groups.values())
    assert result.checked_rows == len(before)
    assert records(root) == before


def test_a_table_whose_path_spark_must_escape_is_read_whole(
    spark: Any, written_table: MakeTable, tmp_path: Path
) -> None:
    buckets = {"10": 3, "20": 3, "30": 3}
    root = written_table("cow_v8")
    bucket_tables.lay_out_in_buckets(root, buckets)
    moved = tmp_path / "a b%20+é#1" / "table"
    moved.parent.mkdir()
    root.rename(moved)

    result = verify(spark, moved, buckets)

    assert result.ok, result.to_dict()
    assert result.checked_rows == ROWS


def test_rules_may_be_a_function_of_the_partition_path(spark: Any, txns_in_buckets: Path) -> None:
    assert verify(spark, txns_in_buckets, TXNS_BUCKETS.__getitem__).ok


def test_a_record_in_a_wrong_bucket_is_reported_with_its_file(spark: Any, txns_in_buckets: Path) -> None:
    stranger_holder = bucket_tables.break_by_moving_a_record(txns_in_buckets, "part=30")

    result = verify(spark, txns_in_buckets, TXNS_BUCKETS)

    [violation] = result.violations
    assert (violation.partition, violation.file_id) == ("part=30", stranger_holder)
    assert violation.kind is ViolationKind.MISPLACED_RECORDS
    assert violation.count == 1
    assert "-> bucket" in violation.detail
    assert result.checked_rows == ROWS


def test_two_live_file_groups_of_one_bucket_are_both_reported(spark: Any, txns_in_buckets: Path) -> None:
    first, second = bucket_tables.break_by_splitting_a_bucket(txns_in_buckets, "part=20")

    result = verify(spark, txns_in_buckets, TXNS_BUCKETS)

    assert kinds_by_file(result) == {
        ("part=20", first): {ViolationKind.DUPLICATE_BUCKET},
        ("part=20", second): {ViolationKind.DUPLICATE_BUCKET},
    }
    assert second in next(v.detail for v in result.violations if v.file_id == first)


def test_a_bucket_id_beyond_the_partitions_count_is_reported(spark: Any, txns_in_buckets: Path) -> None:
    renumbered = bucket_tables.break_by_renumbering_a_bucket(txns_in_buckets, "part=10", 2)

    result = verify(spark, txns_in_buckets, TXNS_BUCKETS)

    # Its records hash below the count, so all of them are misplaced too.
    assert kinds_by_file(result) == {
        ("part=10", renumbered): {ViolationKind.BUCKET_OUT_OF_RANGE, ViolationKind.MISPLACED_RECORDS}
    }


def test_a_record_without_a_key_is_reported_not_failed(spark: Any, txns_in_buckets: Path) -> None:
    erased = bucket_tables.break_by_erasing_a_record_key(txns_in_buckets, "part=20")

    result = verify(spark, txns_in_buckets, TXNS_BUCKETS)

    [violation] = result.violations
    assert (violation.partition, violation.file_id, violation.count) == ("part=20", erased, 1)
    assert violation.kind is ViolationKind.MISSING_RECORD_KEY


def test_only_the_partitions_asked_for_are_checked(spark: Any, txns_in_buckets: Path) -> None:
    bucket_tables.break_by_moving_a_record(txns_in_buckets, "part=30")

    result = verify(spark, txns_in_buckets, TXNS_BUCKETS, partitions=["part=20", "part=10"])

    assert result.ok
    assert result.checked_partitions == 2


def test_a_non_bucket_table_reports_every_file_id(spark: Any, written_table: MakeTable) -> None:
    root = written_table(TXNS)
    groups = bucket_tables.live_groups(root)

    result = verify(spark, root, TXNS_BUCKETS)

    found = kinds_by_file(result)
    assert set(found) == {(p, g.file_id) for p, gs in groups.items() for g in gs}  # every file group
    for (_, file_id), kinds in found.items():
        if is_bucket_file_id(file_id):
            # A random file id that starts with 8 digits (one in about 43) reads as a bucket id, to Hudi's
            # bucket index as to us: that bucket is then out of range, or holds other buckets' records.
            assert kinds, file_id
            assert ViolationKind.NOT_A_BUCKET_FILE not in kinds, file_id
        else:
            assert kinds == {ViolationKind.NOT_A_BUCKET_FILE}, file_id
    if not any(is_bucket_file_id(file_id) for _, file_id in found):
        assert result.checked_rows == 0  # nothing read: no file is any bucket's


@pytest.mark.parametrize("name", ["cow_v8_empty", "cow_v6_empty"])
def test_a_table_without_files_verifies_ok(spark: Any, written_table: MakeTable, name: str) -> None:
    result = verify(spark, written_table(name), {})
    assert result == VerifyResult(0, 0, 0)
    assert result.ok


def test_a_partition_without_a_bucket_count_is_refused(spark: Any, txns_in_buckets: Path) -> None:
    with pytest.raises(InvalidBucketCountError, match="part=30"):
        verify(spark, txns_in_buckets, {"part=20": 3, "part=10": 2})


def test_the_report_is_bounded_and_counts_every_kind() -> None:
    violations = (
        *(Violation("p", f"{i:08d}-x-0", ViolationKind.NOT_A_BUCKET_FILE, "detail") for i in range(150)),
        Violation("p", "00000001-y-0", ViolationKind.MISPLACED_RECORDS, "detail", 7),
    )
    result = VerifyResult(1, 151, 7, violations)

    report = result.to_dict(max_violations=100)

    assert report["ok"] is False
    assert report["violationCount"] == 151
    assert report["violationsByKind"] == {"misplaced-records": 1, "not-a-bucket-file": 150}
    assert len(report["violations"]) == 100
    assert report["truncated"] is True
    assert report["violations"][0] == {
        "partition": "p",
        "fileId": "00000000-x-0",
        "kind": "not-a-bucket-file",
        "detail": "detail",
        "count": 1,
    }
    assert VerifyResult(0, 0, 0).to_dict()["truncated"] is False


def test_the_operator_reads_what_verify_reports_whether_it_passed_or_not() -> None:
    violations = (
        Violation("day=1", "00000001-x-0", ViolationKind.MISPLACED_RECORDS, "detail", 3),
        Violation("day=1", "00000002-y-0", ViolationKind.DUPLICATE_BUCKET, "detail"),
        Violation("day=2", "00000001-z-0", ViolationKind.DUPLICATE_BUCKET, "detail"),
    )
    for result, outcome in (
        (VerifyResult(2, 3, 9, violations), Outcome.FAILED),
        (VerifyResult(2, 3, 9), Outcome.SUCCEEDED),
    ):
        report = JobReport(JobKind.VERIFY, "/t", outcome, "m", "t0", "t1", result.to_dict())
        check = JobReport.from_json(report.to_json()).layout_check()
        assert check is not None
        assert (check.checked_at, check.violations, check.ok) == ("t1", len(result.violations), result.ok)
        assert check.partitions == tuple(sorted({v.partition for v in result.violations}))
        assert check.partition_count == len(check.partitions)
        assert dict(check.by_kind) == result.to_dict()["violationsByKind"]
