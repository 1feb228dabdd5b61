"""Where bucket files are written: at their final names by our commit protocol (no staging folder, no
move), or, on a Spark without its jar, staged and moved into place. Either way a bucket whose rows reach
two tasks is refused and the table is left as it was."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F  # noqa: N812

from hudi_bucket.commands.apply import apply
from hudi_bucket.commands.write import write
from hudi_bucket.contract.requests import ApplyOptions, WriteOptions
from hudi_bucket.core.filegroups import BaseFile
from hudi_bucket.core.metafields import COMMIT_SEQNO, COMMIT_TIME, FILE_NAME, PARTITION_PATH, RECORD_KEY
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.errors import BucketWriteError
from hudi_bucket.reading.table_files import table_files
from hudi_bucket.spark.context import TableContext
from hudi_bucket.spark.session import scoped_conf
from hudi_bucket.storage.local import LocalStorage
from hudi_bucket.writing import direct_write
from hudi_bucket.writing import rescale as rescale_module
from hudi_bucket.writing.bucket_files import write_bucket_files
from lib.bucket_tables import verified
from lib.hudi_rs import REWRITTEN, records

pytestmark = pytest.mark.spark

TABLE = "cow_v6"  # Hudi wrote it (written_tables): partitions 10, 20 and 30


def request(expressions: str, default: int, **options: Any) -> ApplyOptions:
    return ApplyOptions(BucketRules.parse(expressions, default), **options)


def files_of(root: Path, instant: str) -> list[Path]:
    return sorted(p for p in root.rglob("*") if instant in p.name and ".hoodie" not in p.parts)


@pytest.fixture
def moves(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every file move the storage makes (the staged write's; the direct write makes none)."""
    made: list[tuple[str, str]] = []
    real = LocalStorage.rename

    def rename(self: LocalStorage, src: str, dst: str) -> None:
        made.append((src, dst))
        real(self, src, dst)

    monkeypatch.setattr(LocalStorage, "rename", rename)
    return made


@pytest.fixture
def staged(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Spark without our commit protocol: the staged write runs."""
    monkeypatch.setattr(direct_write, "available", lambda _: False)


@pytest.fixture(params=["direct", "staged"])
def either_write(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The direct write, then the staged one."""
    if request.param == "staged":
        monkeypatch.setattr(direct_write, "available", lambda _: False)


def test_bucket_files_are_written_at_their_final_names_with_nothing_staged_or_moved(
    spark: Any, written_table: Any, moves: list[tuple[str, str]]
) -> None:
    root = written_table(TABLE)
    before = records(root, drop=REWRITTEN)
    ctx = TableContext.open(spark, str(root))
    assert direct_write.available(spark)

    result = apply(ctx, request("^10$,4", 2, convert=True))

    assert result.instant is not None
    written = files_of(root, result.instant)
    assert written  # Hudi's base file names, in the partitions' folders, and nothing else (no .crc)
    assert all(
        re.fullmatch(rf"\d{{8}}-[0-9a-f-]+-0_0-0-0_{result.instant}\.parquet", p.name) for p in written
    )
    assert {p.parent.name for p in written} == {"10", "20", "30"}
    assert moves == []
    assert not list(root.rglob("_SUCCESS"))
    assert not list(root.rglob("_temporary"))
    assert not list((root / ".hoodie").glob(".temp/hudi-bucket-*"))
    assert records(root, drop=REWRITTEN) == before
    assert verified(ctx)


@pytest.mark.usefixtures("either_write")
def test_the_sequence_number_and_the_key_columns_are_written_without_a_dictionary(
    spark: Any, written_table: Any
) -> None:
    # In a bucket file their values are distinct, so a dictionary would be built, then dropped. Here
    # every row gets one key, so that Parquet would keep a dictionary unless told not to try one.
    root = written_table(TABLE)
    ctx = TableContext.open(spark, str(root))
    [key_field] = ctx.table.config.record_key_fields
    parsed = (BaseFile.parse(p.parent.name, p.name) for p in sorted(root.glob("*/*.parquet")))
    files = [f for f in parsed if f is not None]
    table = table_files(ctx, files)
    rows = table.read(files).withColumn(RECORD_KEY, F.lit("7")).withColumn(key_field, F.lit(7))
    instant = "20991231235959000"

    write_bucket_files(
        ctx,
        rows,
        instant=instant,
        buckets=dict.fromkeys(("10", "20", "30"), 2),
        data_columns=tuple(table.columns.fieldNames()),
    )

    written = files_of(root, instant)
    assert written
    for path in written:
        footer = pq.ParquetFile(path).metadata
        assert footer.num_rows > 1
        chunks = [
            footer.row_group(g).column(c)
            for g in range(footer.num_row_groups)
            for c in range(footer.num_columns)
        ]
        with_dictionary = {c.path_in_schema for c in chunks if c.has_dictionary_page}
        assert not with_dictionary & {COMMIT_SEQNO, RECORD_KEY, key_field}, path
        assert {COMMIT_TIME, PARTITION_PATH, FILE_NAME} <= with_dictionary, path


# Hudi's bootstrap turns the session's partition type inference off and leaves it so: the staged files'
# folder names then read as strings.
@pytest.mark.parametrize("type_inference", ["true", "false"])
def test_without_the_commit_protocol_files_are_staged_and_moved_into_place(
    spark: Any, written_table: Any, moves: list[tuple[str, str]], staged: None, type_inference: str
) -> None:
    root = written_table(TABLE)
    before = records(root, drop=REWRITTEN)
    ctx = TableContext.open(spark, str(root))

    with scoped_conf(spark, {"spark.sql.sources.partitionColumnTypeInference.enabled": type_inference}):
        result = apply(ctx, request("^10$,4", 2, convert=True))

    assert result.instant is not None
    written = files_of(root, result.instant)
    assert sorted(dst for _, dst in moves) == [str(p.relative_to(root)) for p in written]
    assert all(src.startswith(f".hoodie/.temp/hudi-bucket-{result.instant}/") for src, _ in moves)
    assert not (root / ".hoodie" / ".temp" / f"hudi-bucket-{result.instant}").exists()
    assert records(root, drop=REWRITTEN) == before
    assert verified(ctx)


@pytest.mark.usefixtures("either_write")
def test_a_bucket_whose_rows_reach_two_tasks_is_refused_and_the_table_is_left_as_it_was(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "orders"
    orders = spark.range(400).selectExpr("concat('K-', id) AS key", "id % 2 AS day", "id * 1.5 AS price")
    options = WriteOptions(
        source="",
        record_key=("key",),
        partition_fields=("day",),
        create=True,
        default_buckets=4,
        expressions="^$,1",
    )
    write(spark, str(root), options, rows=orders)
    ctx = TableContext.open(spark, str(root))
    before = records(root, drop=REWRITTEN)
    timeline = sorted((root / ".hoodie").rglob("*commit*"))
    files = sorted(root.rglob("*.parquet"))
    # The shuffle-free doubling trusts each read task to hold whole buckets; deal its rows round robin
    # instead, so that every bucket's rows reach both tasks.
    real_write = rescale_module.write_bucket_files
    monkeypatch.setattr(
        rescale_module,
        "write_bucket_files",
        lambda ctx, rows, **kw: real_write(ctx, rows.repartition(2), **kw),
    )

    with pytest.raises(BucketWriteError, match="came out as several files"):
        apply(ctx, request("^$,1", 8))

    assert records(root, drop=REWRITTEN) == before
    assert ctx.reload().table.timeline.pending() == ()
    assert sorted((root / ".hoodie").rglob("*commit*")) == timeline
    assert sorted(root.rglob("*.parquet")) == files  # what the refused write wrote is gone


def commit_job(spark: Any, *tasks: list[tuple[str, str | None]]) -> None:
    """Our commit protocol's job commit, given what each task read back of its files: (path, None) for a
    footer it read, (path, why) for one it could not."""
    jvm, gateway = spark.sparkContext._jvm, spark.sparkContext._gateway
    written = getattr(jvm.io.hudibucket.spark, "DirectFileCommitProtocol$WrittenFile")
    messages = jvm.java.util.ArrayList()
    for files in tasks:
        array = gateway.new_array(written, len(files))
        for i, (path, unreadable) in enumerate(files):
            array[i] = written(path, -1 if unreadable else 100, -1 if unreadable else 1, unreadable)
        messages.add(getattr(jvm.org.apache.spark.internal.io, "FileCommitProtocol$TaskCommitMessage")(array))
    job = jvm.org.apache.hadoop.mapreduce.task.JobContextImpl(
        jvm.org.apache.hadoop.conf.Configuration(False), jvm.org.apache.hadoop.mapreduce.JobID()
    )
    protocol = jvm.io.hudibucket.spark.DirectFileCommitProtocol("job", "/table", False)
    protocol.commitJob(job, jvm.scala.collection.JavaConverters.asScalaBuffer(messages).toSeq())


def test_a_file_whose_footer_another_task_replaced_as_it_was_read_back_is_named_as_written_twice(
    spark: Any,
) -> None:
    # On an object store both tasks create the file (it is visible only once closed), and the later close
    # may land between the other task's length and tail reads: Parquet then finds no footer.
    replaced = "reading back the footer of /table/10/a.parquet: not a Parquet file"

    with pytest.raises(
        Exception, match=r"DuplicateFileException: 1 file\(s\) written by more than one task: 10/a"
    ):
        commit_job(spark, [("10/a.parquet", replaced), ("10/b.parquet", None)], [("10/a.parquet", None)])


def test_a_file_one_task_wrote_and_could_not_read_back_fails_the_commit_naming_it(spark: Any) -> None:
    unreadable = "reading back the footer of /table/10/a.parquet: not a Parquet file"

    with pytest.raises(Exception, match=re.escape(unreadable)):
        commit_job(spark, [("10/a.parquet", unreadable)], [("10/b.parquet", None)])


@pytest.mark.parametrize("buckets", [8, 6], ids=["without a shuffle", "with a shuffle"])
def test_a_rewrite_reads_no_file_metadata_when_it_chooses_between_no_copies(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, buckets: int
) -> None:
    # Spark's file metadata, once asked for (the old file names), stays in the scan even when the plan
    # drops it: every field of it, and each row's index, for every row read.
    root = tmp_path / "orders"
    orders = spark.range(400).selectExpr("concat('K-', id) AS key", "id % 2 AS day", "id * 1.5 AS price")
    options = WriteOptions(
        source="", record_key=("key",), partition_fields=("day",), create=True, default_buckets=4,
        expressions="^$,1",
    )  # fmt: skip
    write(spark, str(root), options, rows=orders)
    before = records(root, drop=REWRITTEN)
    plans: list[str] = []
    real_write = rescale_module.write_bucket_files

    def planned_write(ctx: TableContext, rows: Any, **kw: Any) -> Any:
        plans.append(rows._jdf.queryExecution().executedPlan().toString())
        return real_write(ctx, rows, **kw)

    monkeypatch.setattr(rescale_module, "write_bucket_files", planned_write)

    result = apply(TableContext.open(spark, str(root)), request("^$,1", buckets))

    assert result.instant is not None
    assert len(plans) == 1
    assert "_metadata" not in plans[0]
    assert "row_index" not in plans[0]
    assert records(root, drop=REWRITTEN) == before
