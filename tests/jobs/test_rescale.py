"""The shuffle-free rewrite reads each group of old bucket files as exactly one task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F  # noqa: N812

from hudi_bucket.spark.session import scoped_conf
from hudi_bucket.writing.rescale import ONE_TASK_PER_FILE, ONE_TASK_PER_READ, read_in_groups

pytestmark = pytest.mark.spark


def write_files(spark: Any, folder: Path, count: int) -> list[str]:
    spark.range(count * 50).repartition(count).write.parquet(str(folder))
    return sorted(str(f) for f in folder.glob("*.parquet"))


@pytest.mark.parametrize("group_size", [1, 3])
def test_every_group_of_files_is_one_task(spark: Any, tmp_path: Path, group_size: int) -> None:
    files = write_files(spark, tmp_path / "data", 6)
    groups = [files[i : i + group_size] for i in range(0, len(files), group_size)]
    schema = spark.read.parquet(*files).schema
    rows = read_in_groups(lambda group: spark.read.schema(schema).parquet(*group), groups)

    with scoped_conf(spark, ONE_TASK_PER_READ):
        placed = rows.select(F.spark_partition_id().alias("task"), F.input_file_name().alias("file"))
        tasks = placed.distinct().groupBy("task").agg(F.collect_set("file").alias("files")).collect()

    assert rows.count() == 6 * 50
    assert sorted(sorted(t.files) for t in tasks) == sorted(sorted(f"file://{f}" for f in g) for g in groups)


def test_one_scan_of_many_files_makes_a_task_of_each(spark: Any, tmp_path: Path) -> None:
    files = write_files(spark, tmp_path / "data", 6)

    with scoped_conf(spark, ONE_TASK_PER_FILE):
        placed = spark.read.parquet(*files).select(F.spark_partition_id().alias("task"), F.input_file_name())
        tasks = placed.distinct().groupBy("task").count().collect()

    assert sorted(t["count"] for t in tasks) == [1] * len(files)


def test_scoped_settings_are_put_back(spark: Any) -> None:
    key = "spark.sql.files.openCostInBytes"
    before = spark.conf.get(key)
    with scoped_conf(spark, {key: "0", "spark.hbo.test.unset": "x"}):
        assert spark.conf.get(key) == "0"
    assert spark.conf.get(key) == before
    assert spark.conf.get("spark.hbo.test.unset", None) is None
