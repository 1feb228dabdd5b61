"""Spark's hash partitioning sends each bucket file's rows to the task ``core.routing`` chose for it."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import functions as F  # noqa: N812

from hudi_bucket.core.routing import murmur3_int, routing_keys

pytestmark = pytest.mark.spark


def test_our_murmur3_is_sparks_hash_of_an_int(spark: Any) -> None:
    values = [0, 1, -1, 42, 2**31 - 1, -(2**31), 123_456_789]
    hashed = spark.createDataFrame([(v,) for v in values], "v int").select(F.hash("v")).collect()
    assert [row[0] for row in hashed] == [murmur3_int(v) for v in values]


@pytest.mark.parametrize(("files", "tasks"), [(12, 12), (40, 20)])
def test_each_files_rows_reach_the_task_routed_to(spark: Any, files: int, tasks: int) -> None:
    keys = routing_keys(files, tasks)
    rows = spark.range(files * 50).select((F.col("id") % files).cast("int").alias("position"))
    key = F.element_at(F.array(*(F.lit(k) for k in keys)), F.col("position") + 1)
    landed = rows.repartition(tasks, key).select("position", F.spark_partition_id().alias("task")).distinct()
    assert sorted((r.position, r.task) for r in landed.collect()) == [(p, p % tasks) for p in range(files)]
