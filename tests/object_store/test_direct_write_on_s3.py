"""Bucket files on S3 are written at their final keys: no staging keys, no copy, no delete of a staged
copy; and a bucket whose rows reach two tasks is refused there too, leaving the table as it was."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from object_store.conftest import UploadTable
from object_store.s3_tables import hudi_rs_rows, hudi_spark_rows
from object_store.server import S3Server
from pyarrow import fs as pafs

from hudi_bucket.commands.apply import apply
from hudi_bucket.commands.write import write
from hudi_bucket.contract.requests import ApplyOptions, WriteOptions
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.errors import BucketWriteError
from hudi_bucket.spark.context import TableContext
from hudi_bucket.storage.hadoop import HadoopStorage
from hudi_bucket.writing import rescale as rescale_module
from lib.bucket_tables import verified


def keys(s3: S3Server, prefix: str) -> list[str]:
    selector = pafs.FileSelector(f"{s3.bucket}/{prefix}", recursive=True)
    return sorted(i.path for i in s3.filesystem().get_file_info(selector) if i.type.name == "File")


def test_an_apply_on_s3_writes_each_bucket_file_at_its_final_key_and_copies_nothing(
    spark: Any, s3: S3Server, s3_prefix: str, upload_table: UploadTable, written_table: Callable[[str], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    table = upload_table(written_table("cow_v6"), s3_prefix)
    before, before_in_hudi = hudi_rs_rows(s3, table), hudi_spark_rows(spark, table)
    renames: list[tuple[str, str]] = []
    real_rename = HadoopStorage.rename
    monkeypatch.setattr(
        HadoopStorage,
        "rename",
        lambda self, src, dst: (renames.append((src, dst)), real_rename(self, src, dst)),
    )
    ctx = TableContext.open(spark, table)

    result = apply(ctx, ApplyOptions(BucketRules.parse("^10$,4", 2), convert=True))

    assert result.instant is not None
    assert renames == []
    ours = [k for k in keys(s3, s3_prefix) if result.instant in k and "/.hoodie/" not in k]
    assert len(ours) == result.files_written
    assert all(k.endswith(f"-0_0-0-0_{result.instant}.parquet") for k in ours)
    assert not [k for k in keys(s3, s3_prefix) if "hudi-bucket-" in k or "_temporary" in k or "_SUCCESS" in k]
    assert hudi_rs_rows(s3, table) == before
    assert hudi_spark_rows(spark, table) == before_in_hudi
    assert verified(ctx)


def test_a_bucket_whose_rows_reach_two_tasks_on_s3_is_refused_and_the_table_is_left_as_it_was(
    spark: Any, s3: S3Server, s3_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = s3.uri(f"{s3_prefix}/orders")
    orders = spark.range(400).selectExpr("concat('K-', id) AS key", "id % 2 AS day", "id * 1.5 AS price")
    options = WriteOptions(
        source="", record_key=("key",), partition_fields=("day",), create=True, default_buckets=4,
        expressions="^$,1",
    )  # fmt: skip
    write(spark, table, options, rows=orders)
    before, files = hudi_rs_rows(s3, table), keys(s3, s3_prefix)
    # Every bucket's rows dealt round robin to two tasks, where the shuffle-free doubling trusts each
    # read task to hold whole buckets.
    real_write = rescale_module.write_bucket_files
    monkeypatch.setattr(
        rescale_module,
        "write_bucket_files",
        lambda ctx, rows, **kw: real_write(ctx, rows.repartition(2), **kw),
    )

    with pytest.raises(BucketWriteError, match="came out as several files"):
        apply(TableContext.open(spark, table), ApplyOptions(BucketRules.parse("^$,1", 8)))

    assert keys(s3, s3_prefix) == files
    assert hudi_rs_rows(s3, table) == before
