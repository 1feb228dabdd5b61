"""Every file group shape Hudi writes is rewritten with every column of every row: bootstrapped tables
(METADATA_ONLY skeletons beside their source files, FULL_RECORD, a bootstrapped table after upserts,
partitioned or not) and MERGE_ON_READ tables (versions 6, 8 and 9, log files with updates and deletes,
bucket-indexed or not). The Native engine converts each to a bucket layout, then rescales it without a
shuffle; Apache Hudi reads exactly the rows written before each step (and hudi-rs, which reads none of
these shapes whole, reads the result), and Hudi then upserts the table with the writer options our
report prints, leaving one record per key."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hudi_bucket.commands.apply import apply
from hudi_bucket.commands.rollback import rollback
from hudi_bucket.commands.write import write
from hudi_bucket.contract.requests import HUDI_BUNDLE_ENV, ApplyOptions, WriteOptions
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.errors import IncompleteRewriteError, RecordedSchemaError, UnsupportedTableError
from hudi_bucket.hudi.table import load_table
from hudi_bucket.spark.context import TableContext
from hudi_bucket.storage import LocalStorage
from hudi_bucket.writing import rescale
from lib.bucket_tables import live_groups, verified
from lib.file_slice_tables import (
    FULL_RECORD,
    METADATA_ONLY,
    SCHEMA,
    Templates,
    Written,
    bootstrapped,
    merge_on_read,
    rows,
)
from lib.hudi_rs import snapshot
from lib.hudi_spark import hudi_read, hudi_write

pytestmark = pytest.mark.spark

COLUMNS = [c.split()[0] for c in SCHEMA.split(", ")]
TABLES: dict[str, Callable[[Any, Path], Written]] = {
    "bootstrap-metadata-only": lambda spark, root: bootstrapped(spark, root, selector=METADATA_ONLY),
    "bootstrap-full-record": lambda spark, root: bootstrapped(spark, root, selector=FULL_RECORD),
    "bootstrap-then-upserted": lambda spark, root: bootstrapped(
        spark, root, selector=METADATA_ONLY, upserted=True
    ),
    "bootstrap-not-partitioned": lambda spark, root: bootstrapped(
        spark, root, selector=METADATA_ONLY, partitioned=False
    ),
    "merge-on-read-v6": lambda spark, root: merge_on_read(spark, root, version=6),
    "merge-on-read-v8": lambda spark, root: merge_on_read(spark, root, version=8),
    "merge-on-read-v9": lambda spark, root: merge_on_read(spark, root, version=9),
}


@pytest.fixture(scope="module")
def templates(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Templates:
    return Templates(spark, tmp_path_factory.mktemp("file-slices"))


def request(expressions: str, default: int, **options: Any) -> ApplyOptions:
    return ApplyOptions(BucketRules.parse(expressions, default), **options)


def hudi_rows(spark: Any, root: Path) -> list[tuple]:
    """Every row Apache Hudi reads, data columns in ``SCHEMA`` order, sorted."""
    return sorted(tuple(r) for r in hudi_read(spark, root).select(*COLUMNS).collect())


def hudi_rs_rows(root: Path) -> list[tuple]:
    table = snapshot(root).select(COLUMNS)
    return sorted(tuple(r.values()) for r in table.to_pylist())


@pytest.mark.parametrize("name", list(TABLES))
def test_converted_then_rescaled_with_every_column_of_every_row(
    spark: Any, templates: Templates, tmp_path: Path, name: str
) -> None:
    root = tmp_path / "table"
    written = templates.copy(name, TABLES[name], root)
    assert hudi_rows(spark, root) == written.expected  # Hudi reads the table it wrote
    ctx = TableContext.open(spark, str(root))

    converted = apply(ctx, request("2025-11-0[12],4", 2, convert=True))
    assert converted.instant is not None
    assert hudi_rows(spark, root) == written.expected
    assert hudi_rs_rows(root) == written.expected
    assert verified(ctx.reload())
    assert load_table(LocalStorage(root)).config.table_type == written.options.get(
        "hoodie.datasource.write.table.type", "COPY_ON_WRITE"
    )

    rescaled = apply(ctx.reload(), request("2025-11-0[12],8", 4))
    assert rescaled.shuffle_free
    assert hudi_rows(spark, root) == written.expected
    assert hudi_rs_rows(root) == written.expected
    assert verified(ctx.reload())

    # Hudi writes on, with the options our report prints: updates land on their keys, no key twice.
    update = rows(range(0, 400, 5), 9)
    hudi_write(
        spark, root, spark.createDataFrame(update, SCHEMA), {**written.options, **rescaled.writer_options}
    )
    expected = {r[0]: r for r in written.expected} | {r[0]: r for r in update}
    assert hudi_rows(spark, root) == sorted(expected.values())


@pytest.mark.parametrize(
    ("loss", "said"),
    [
        ("column", r"lack the column\(s\) \['note'\] of the table's schema"),
        ("rows", r"partition 'day=2025-11-01': read 100 record\(s\), wrote 0"),
    ],
)
def test_a_rewrite_that_loses_a_column_or_rows_is_rolled_back_by_the_guard(
    spark: Any, templates: Templates, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loss: str, said: str
) -> None:
    """Whatever reads or writes wrong, the instant does not complete with data missing: the table stays
    as it was, and the message names what the files written lacked."""
    root = tmp_path / "table"
    written = templates.copy("bootstrap-metadata-only", TABLES["bootstrap-metadata-only"], root)
    write = rescale.write_bucket_files

    def lossy(ctx: Any, rows: Any, *, data_columns: tuple[str, ...], **options: Any) -> Any:
        if loss == "column":
            data_columns = tuple(c for c in data_columns if c != "note")
        else:
            rows = rows.where("_hoodie_partition_path != 'day=2025-11-01'")
        return write(ctx, rows, data_columns=data_columns, **options)

    monkeypatch.setattr(rescale, "write_bucket_files", lossy)
    files_before = sorted(p.relative_to(root) for p in root.rglob("*") if ".hoodie" not in p.parts)
    with pytest.raises(IncompleteRewriteError, match=said) as refused:
        apply(TableContext.open(spark, str(root)), request("2025-11-0[12],4", 2, convert=True))

    assert "nothing was committed" in str(refused.value)
    table = load_table(LocalStorage(root))
    assert [i.action.value for i in table.timeline.completed()] == ["commit"]  # the bootstrap's alone
    assert not table.timeline.pending()
    assert sorted(p.relative_to(root) for p in root.rglob("*") if ".hoodie" not in p.parts) == files_before
    assert hudi_rows(spark, root) == written.expected


def test_without_hudis_bundle_a_merge_on_read_table_is_refused_before_anything_is_written(
    templates: Templates, tmp_path: Path
) -> None:
    """A job without Hudi's bundle cannot read log files: it says so, and what to do, and writes nothing."""
    root = tmp_path / "table"
    templates.copy("merge-on-read-v9", TABLES["merge-on-read-v9"], root)
    before = sorted((p.relative_to(root), p.stat().st_mtime_ns) for p in root.rglob("*"))
    environ = {k: v for k, v in os.environ.items() if k != HUDI_BUNDLE_ENV}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "hudi_bucket",
            "apply",
            "--table",
            str(root),
            "--expressions",
            "x,4",
            "--default",
            "2",
            "--convert",
        ],
        env=environ,
        capture_output=True,
        text=True,
        check=False,
    )

    assert done.returncode == 1, done.stdout
    [message] = [line for line in done.stderr.splitlines() if line.startswith("hudi-bucket-job apply: ")]
    assert "only Apache Hudi's reader reads whole" in message
    assert "HBO_HUDI_BUNDLE" in message
    assert sorted((p.relative_to(root), p.stat().st_mtime_ns) for p in root.rglob("*")) == before


def test_a_bootstrap_that_recorded_another_schema_is_refused_saying_why_hudi_cannot_read_it(
    spark: Any, templates: Templates, tmp_path: Path
) -> None:
    """Bootstrapped from a frame with columns, Hudi records that frame's schema as the table's and its own
    reader fails on the table: the rewrite stops with nothing committed and says what went wrong."""
    root = tmp_path / "table"
    templates.copy(
        "bootstrap-misrecorded",
        lambda spark, root: bootstrapped(spark, root, selector=METADATA_ONLY, given="x int"),
        root,
    )
    with pytest.raises(RecordedSchemaError) as refused:
        apply(TableContext.open(spark, str(root)), request("2025-11-0[12],4", 2, convert=True))

    message = str(refused.value)
    assert "the table's recorded schema (columns ['x']) lacks its record key field(s) ['key']" in message
    assert "partition field(s) ['day'], ordering field(s) ['ts']" in message
    assert "the schema of the frame the bootstrap was given" in message
    table = load_table(LocalStorage(root))
    assert [i.action.value for i in table.timeline.completed()] == ["commit"]
    assert not table.timeline.pending()


def test_rolling_back_a_conversion_gives_the_bootstrapped_file_groups_back(
    spark: Any, templates: Templates, tmp_path: Path
) -> None:
    root = tmp_path / "table"
    written = templates.copy("bootstrap-then-upserted", TABLES["bootstrap-then-upserted"], root)
    ctx = TableContext.open(spark, str(root))
    converted = apply(ctx, request("2025-11-0[12],4", 2, convert=True))
    assert converted.instant is not None

    rollback(ctx.reload(), converted.instant)

    assert hudi_rows(spark, root) == written.expected  # skeletons beside their source files again
    assert not (root / ".hoodie" / ".bucket_index").exists() or not any(
        (root / ".hoodie" / ".bucket_index").rglob("*.hashing_config")
    )


def test_write_refuses_a_merge_on_read_table_whose_log_files_it_would_leave_behind(
    spark: Any, templates: Templates, tmp_path: Path
) -> None:
    root = tmp_path / "table"
    written = templates.copy("merge-on-read-v9", TABLES["merge-on-read-v9"], root)
    request = WriteOptions(source="", record_key=("key",), partition_fields=("day",), ordering_field="ts")
    with pytest.raises(UnsupportedTableError, match="MERGE_ON_READ table; `write` writes copy-on-write"):
        write(spark, str(root), request, rows=spark.createDataFrame(rows(range(3), 5), SCHEMA))
    assert hudi_rows(spark, root) == written.expected


@pytest.mark.parametrize(
    ("buckets", "shuffle_free"), [(4, False), (1, True)], ids=["doubled-shuffled", "merged-shuffle-free"]
)
def test_a_bucket_indexed_merge_on_read_table_is_rescaled_and_stays_merge_on_read(
    spark: Any, templates: Templates, tmp_path: Path, buckets: int, shuffle_free: bool
) -> None:
    """Hudi's own MERGE_ON_READ bucket table (2 buckets, log files of updates and deletes in most of its
    file groups): the Native engine rescales two days, read by Hudi's reader. Doubled, a task per file
    slice feeds a shuffle, each new file to a task of its own (one task per partition would write all of
    its new buckets); merged into one bucket, each partition is one task and no shuffle. Hudi then
    writes on into log files of the new file groups."""
    root = tmp_path / "table"
    written = templates.copy(
        "merge-on-read-bucket", lambda spark, root: merge_on_read(spark, root, version=9, bucket=True), root
    )
    ctx = TableContext.open(spark, str(root))

    rescaled = apply(ctx, request(f"2025-11-0[12],{buckets}", 2, current_buckets=2))

    assert rescaled.shuffle_free is shuffle_free
    assert {c.partition for c in rescaled.plan.changes} == {"day=2025-11-01", "day=2025-11-02"}
    assert hudi_rows(spark, root) == written.expected
    assert verified(ctx.reload())
    update = rows(range(0, 400, 3), 9)
    hudi_write(
        spark, root, spark.createDataFrame(update, SCHEMA), {**written.options, **rescaled.writer_options}
    )
    assert any(
        g.latest_slice().log_files for g in live_groups(root)["day=2025-11-01"]
    )  # into new groups' logs
    expected = {r[0]: r for r in written.expected} | {r[0]: r for r in update}
    assert hudi_rows(spark, root) == sorted(expected.values())
    assert verified(ctx.reload())
