"""Tables whose file slices are not all plain base files, written by Apache Hudi itself: bootstrapped from
a plain Parquet dataset (RFC-12: METADATA_ONLY skeletons beside the untouched source files, FULL_RECORD
rewrites, and a bootstrapped table after upserts, some file groups rewritten and some not), and
MERGE_ON_READ tables whose log files hold updates and deletes. Each is written once per test session and
copied per test (``Templates``); ``expected`` gives the rows each must hold, known from what was written."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hudi_bucket.spark.session import scoped_conf
from lib.hudi_spark import hudi_write

SELECTOR = "org.apache.hudi.client.bootstrap.selector"
METADATA_ONLY, FULL_RECORD = "MetadataOnlyBootstrapModeSelector", "FullRecordBootstrapModeSelector"
SCHEMA = "key string, ts long, amount double, note string, day string"
DAYS = ("2025-11-01", "2025-11-02", "2025-11-03", "2025-11-04")


def rows(ids: range, ts: int) -> list[tuple]:
    """Records of ``SCHEMA``: key k<id>, day by id, amount and note by id and write."""
    return [(f"k{i:05d}", ts, i * 1.5 + ts, f"note {i}/{ts}", DAYS[i % len(DAYS)]) for i in ids]


@dataclass(frozen=True)
class Written:
    """A table Hudi wrote: the options it wrote with (to upsert it again), and its rows, data columns in
    ``SCHEMA`` order, as Hudi must read them."""

    options: dict[str, str]
    expected: list[tuple]


def _common(version: int, partitioned: bool) -> dict[str, str]:
    return {
        "hoodie.datasource.write.recordkey.field": "key",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.partitionpath.field": "day" if partitioned else "",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen."
        + ("SimpleKeyGenerator" if partitioned else "NonpartitionedKeyGenerator"),
        "hoodie.metadata.enable": "false",
        "hoodie.write.table.version": str(version),
    }


def bootstrapped(
    spark: Any,
    root: Path,
    *,
    selector: str,
    partitioned: bool = True,
    upserted: bool = False,
    given: str = "struct<>",
) -> Written:
    """A plain Parquet dataset beside ``root`` (partitioned by day as Spark writes it: the day lives in
    the folder names, not in the files), bootstrapped by Hudi into a table at ``root``; with
    ``upserted``, Hudi then upserts some keys (their file groups rewritten whole, the others left as
    skeletons). ``given`` is the schema of the empty frame Hudi's bootstrap is given."""
    source = root.parent / f"{root.name}-source"
    original = rows(range(400), 1)
    frame = spark.createDataFrame(original, SCHEMA)
    (frame.write.partitionBy("day") if partitioned else frame.write).parquet(str(source))
    options = {
        **_common(9, partitioned),
        "hoodie.bootstrap.base.path": str(source),
        "hoodie.bootstrap.mode.selector": f"{SELECTOR}.{selector}",
    }
    # An empty frame without columns, as Hudi's guide bootstraps (Scala's spark.emptyDataFrame): Hudi
    # records the schema of the frame it is given as the table's, and reads the table with it.
    empty = spark.createDataFrame([], given)
    # Hudi's bootstrap turns the session's partition type inference off for good: put it back after.
    inference = "spark.sql.sources.partitionColumnTypeInference.enabled"
    with scoped_conf(spark, {inference: spark.conf.get(inference, "true")}):
        hudi_write(spark, root, empty, options, operation="bootstrap")
    expected = {r[0]: r for r in original}
    if upserted:
        update = rows(range(0, 400, 7), 2)
        hudi_write(spark, root, spark.createDataFrame(update, SCHEMA), options)
        expected |= {r[0]: r for r in update}
    return Written(options, sorted(expected.values()))


def merge_on_read(spark: Any, root: Path, *, version: int, bucket: bool = False) -> Written:
    """A MERGE_ON_READ table (simple index, or a simple bucket index of 2) written by Hudi: inserts into
    base files, then updates and deletes into log files."""
    options = {
        **_common(version, True),
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.compact.inline": "false",
        **(
            {
                "hoodie.index.type": "BUCKET",
                "hoodie.bucket.index.engine": "SIMPLE",
                "hoodie.bucket.index.num.buckets": "2",
            }
            if bucket
            else {}
        ),
    }
    inserted, updated, deleted = rows(range(400), 1), rows(range(0, 120), 2), rows(range(300, 340), 3)
    hudi_write(spark, root, spark.createDataFrame(inserted, SCHEMA), options, operation="insert")
    hudi_write(spark, root, spark.createDataFrame(updated, SCHEMA), options)
    hudi_write(spark, root, spark.createDataFrame(deleted, SCHEMA), options, operation="delete")
    expected = {r[0]: r for r in inserted} | {r[0]: r for r in updated}
    for r in deleted:
        del expected[r[0]]
    return Written(options, sorted(expected.values()))


class Templates:
    """Each table written once per session into ``folder``; ``copy`` gives a test its own copy."""

    def __init__(self, spark: Any, folder: Path) -> None:
        self.spark, self.folder = spark, folder
        self._written: dict[str, Written] = {}

    def copy(self, name: str, write: Callable[[Any, Path], Written], root: Path) -> Written:
        template = self.folder / name / "table"
        if name not in self._written:
            self._written[name] = write(self.spark, template)
        shutil.copytree(template, root)
        return self._written[name]
