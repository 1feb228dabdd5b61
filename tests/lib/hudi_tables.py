"""Tables Apache Hudi writes for the interop tests: a copy-on-write bucket table over four days, its
records, and the checks every scenario ends with."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from lib.hudi_spark import (
    bucket_options,
    data_rows,
    hudi_read,
    hudi_rs_rows,
    hudi_sql,
    hudi_write,
    metadata_table_listing,
    storage_listing,
)

SCHEMA = "id int, name string, day string, ts long"
DAYS = ["day=2025-11-10", "day=2025-11-11", "day=2025-11-12", "day=2025-11-13"]
HUDI_RULES = "day=2025-11-11,4"  # what Hudi's procedure gives the table, default 2
MERGE_ON_READ = {"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.metadata.enable": "false"}
# A metadata table with the indexes Hudi 1.x keeps of every file (its files, column stats, partition stats,
# bloom filters) and of every key (the global record index). One shape, so the tests that need it share
# one table Hudi wrote.
WITH_INDEXES = {
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.global.record.level.index.enable": "true",
    "hoodie.metadata.index.column.stats.enable": "true",
    "hoodie.metadata.index.bloom.filter.enable": "true",
}


def day_of(i: int) -> str:
    return DAYS[i % len(DAYS)].removeprefix("day=")


def records(spark: Any, ids: range, ts: int, day: str | None = None) -> Any:
    return spark.createDataFrame([(i, f"n{i}-{ts}", day or day_of(i), ts) for i in ids], SCHEMA)


class HudiBucketTables:
    """Bucket tables written by Hudi (2 buckets), given rules by Hudi's partition_bucket_index_manager,
    then upserted by Hudi under them (``write_hudi_bucket_table``): one per table version and ``extra``
    options is written once per run (the ``hudi_tables`` fixture), and each test gets a copy."""

    def __init__(self, spark: Any, folder: Path) -> None:
        self.spark, self.folder = spark, folder
        self.written: dict[str, tuple[Path, dict[str, str]]] = {}  # template and options, by shape

    def copy(self, root: Path, version: int, extra: dict[str, str] | None = None) -> dict[str, str]:
        """A copy of the table of ``version`` and ``extra`` at ``root``; returns the options Hudi wrote it
        with."""
        shape = repr((version, sorted((extra or {}).items())))
        if shape not in self.written:
            template = self.folder / f"orders_{len(self.written)}"
            self.written[shape] = (template, write_hudi_bucket_table(self.spark, template, version, extra))
        template, options = self.written[shape]
        shutil.copytree(template, root)
        return options


def write_hudi_bucket_table(
    spark: Any, root: Path, version: int, extra: dict[str, str] | None = None
) -> dict[str, str]:
    """Hudi writes the table (2 buckets), gives it rules with its procedure, then upserts it; ``extra``
    options on every write (a metadata table, MERGE_ON_READ). Returns the options it wrote with. A table
    of version 6 gets no rules (the procedure would upgrade it to 9): a plain bucket table."""
    options = bucket_options(
        record_key="id",
        partition_field="day",
        ordering_field="ts",
        table_version=version,
        buckets=2,
        **(extra or {}),
    )
    hudi_write(spark, root, records(spark, range(80), 1), options)
    if version >= 8:
        [result] = hudi_sql(
            spark,
            root,
            f"call partition_bucket_index_manager(table => '{{table}}', overwrite => '{HUDI_RULES}', "
            "bucket_number => 2, dry_run => false)",
        )
        assert result[0] == "SUCCESS", result
    hudi_write(spark, root, records(spark, range(60, 100), 2), options)
    return options


def one_record_per_key(spark: Any, root: Path) -> list[tuple]:
    rows = data_rows(hudi_read(spark, root))
    assert len({r[1] for r in rows}) == len(rows)  # columns sorted: day, id, name, ts
    return rows


def read_alike_everywhere(spark: Any, root: Path, before: list[tuple]) -> None:
    """The metadata table lists the files storage holds, and reading through it and past it gives the
    rows ``before``, as hudi-rs does."""
    assert metadata_table_listing(spark, root) == storage_listing(root)
    assert one_record_per_key(spark, root) == before
    listed = hudi_read(spark, root, **{"hoodie.metadata.enable": "false"})
    assert sorted(map(tuple, listed.select("day", "id", "name", "ts").collect())) == sorted(before)
    assert hudi_rs_rows(root) == before
