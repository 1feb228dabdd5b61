"""Real Hudi tables written by Apache Hudi in the tests: the shapes a table has before a user adopts this
project (no bucket index), in table versions 6, 8 and 9, copy-on-write and merge-on-read.

``../shared`` holds tables that earlier Hudi releases wrote (the corpus our reader is checked against,
see paths.py); these are the tables the tests need without it. Hudi's Spark writer (its bundle is in the
tests' session) writes each one on first use, once per Hudi bundle and per version of this file, into a
cache outside the checkout (``$HBO_CACHE/hudi-tables/``); each test gets a copy.

A table with data holds the same records whatever its shape, from two commits: ids 0-11 inserted, then
ids 6-14 upserted (6-11 updated, 12-14 new): 15 rows, 5 in each of the partitions ``part`` 10, 20 and 30.
A merge-on-read table keeps the upsert's updates in log files (nothing compacts it). One table is then
overwritten whole with the rows of partition 30, leaving 10 and 20 empty.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

SCHEMA = (
    "id int, name string, part int, sub int, ts long, amount decimal(10,2), day date, at timestamp, "
    "tags array<string>, attrs map<string,int>, address struct<city:string,zip:int>"
)
EMPTY_SCHEMA = "id int, name string, ts long"
PARTITIONS = ("10", "20", "30")
ROWS = 15


@dataclass(frozen=True)
class Shape:
    """How Hudi writes one table: its version and type, keys, partitioning, metadata table."""

    version: int
    merge_on_read: bool = False
    record_key: tuple[str, ...] = ("id",)
    partition_fields: tuple[str, ...] = ("part",)
    hive_style: bool = False
    metadata_table: bool = False
    empty: bool = False
    overwritten: bool = False  # a third commit: insert_overwrite_table of partition 30's rows

    @property
    def key_generator(self) -> str:
        if not self.partition_fields:
            return "NON_PARTITION"
        return "COMPLEX" if len(self.record_key) > 1 or len(self.partition_fields) > 1 else "SIMPLE"

    def options(self, name: str) -> dict[str, str]:
        """Hudi's Spark writer options, as a user writes such a table."""
        return {
            "hoodie.table.name": name,
            "hoodie.write.table.version": str(self.version),
            "hoodie.datasource.write.table.type": "MERGE_ON_READ" if self.merge_on_read else "COPY_ON_WRITE",
            "hoodie.datasource.write.recordkey.field": ",".join(self.record_key),
            "hoodie.datasource.write.partitionpath.field": ",".join(self.partition_fields),
            "hoodie.datasource.write.keygenerator.type": self.key_generator,
            "hoodie.datasource.write.hive_style_partitioning": str(self.hive_style).lower(),
            "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.metadata.enable": str(self.metadata_table).lower(),
            # Updates stay in log files on merge-on-read (a small base file would take them otherwise).
            "hoodie.parquet.small.file.limit": "0",
        }


TABLES = {
    "cow_v6": Shape(6),
    "cow_v8": Shape(8),
    "cow_v9": Shape(9),
    "mor_v6": Shape(6, merge_on_read=True),
    "mor_v8": Shape(8, merge_on_read=True),
    "mor_v9": Shape(9, merge_on_read=True),
    "cow_v6_complex_hivestyle": Shape(
        6, record_key=("id", "name"), partition_fields=("part", "sub"), hive_style=True
    ),
    "cow_v6_overwritten": Shape(6, overwritten=True),
    "cow_v8_nonpartitioned": Shape(8, partition_fields=()),
    "cow_v9_meta": Shape(9, hive_style=True, metadata_table=True),
    "mor_v9_meta": Shape(9, merge_on_read=True, hive_style=True, metadata_table=True),
    "cow_v6_empty": Shape(6, partition_fields=(), hive_style=True, empty=True),  # Hudi's SQL's default
    "cow_v8_empty": Shape(8, partition_fields=(), hive_style=True, empty=True),
}
WITH_DATA = [name for name, shape in TABLES.items() if not shape.empty]
EMPTY = [name for name, shape in TABLES.items() if shape.empty]


def rows(spark: Any, ids: range, ts: int) -> Any:
    """The records ``ids`` as written at ``ts`` (what the upsert changes: ts, amount, at)."""
    day, at = datetime.date(2025, 11, 11), datetime.datetime(2025, 11, 11, 10, 0, tzinfo=datetime.UTC)
    return spark.createDataFrame(
        [
            (
                i, f"n{i}", int(PARTITIONS[i % 3]), i % 2, ts, Decimal(f"{i}.{ts:02d}"), day,
                at + datetime.timedelta(minutes=i, seconds=ts), [f"t{i}"] * (i % 3), {"k": i}, (f"c{i}", i),
            )
            for i in ids
        ],
        SCHEMA,
    )  # fmt: skip


def write_table(spark: Any, root: Path, name: str) -> None:
    """Hudi writes table ``name`` (of ``TABLES``) at ``root``."""
    shape = TABLES[name]
    if shape.empty:
        # Hudi's SQL creates a table and writes no data: hoodie.properties, no instant.
        spark.sql(
            f"CREATE TABLE {name} ({EMPTY_SCHEMA}) USING hudi LOCATION '{root}' TBLPROPERTIES (type = 'cow', "
            f"primaryKey = 'id', preCombineField = 'ts', 'hoodie.write.table.version' = '{shape.version}')"
        )
        return
    commits = [(range(12), 1, "upsert"), (range(6, 15), 2, "upsert")]
    if shape.overwritten:
        commits.append((range(2, 15, 3), 3, "insert_overwrite_table"))
    for ids, ts, operation in commits:
        (
            rows(spark, ids, ts)
            .write.format("hudi")
            .options(**shape.options(name))
            .option("hoodie.datasource.write.operation", operation)
            .mode("append")
            .save(str(root))
        )


def cache_folder(hudi_bundle: Path) -> Path:
    """Where the tables the bundle (its jar's name holds Hudi's version) writes with this file are kept."""
    cache = os.environ.get("HBO_CACHE") or Path(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "hudi-bucket-operator"
    )
    code = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
    return Path(cache, "hudi-tables", f"{hudi_bundle.stem}-{code}")


class WrittenTables:
    """The tables of ``TABLES``, each written by Hudi on first use (or found in the cache)."""

    def __init__(self, spark: Any, hudi_bundle: Path) -> None:
        self.spark = spark
        self.folder = cache_folder(hudi_bundle)

    def copy(self, name: str, root: Path) -> Path:
        """A copy of table ``name`` at ``root``."""
        shutil.copytree(self.template(name), root)
        return root

    def template(self, name: str) -> Path:
        """The cached table ``name``, written first if it is not there (not to be changed)."""
        target = self.folder / name
        if target.exists():
            return target
        self.folder.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".writing-{name}-", dir=self.folder))
        try:
            write_table(self.spark, work / name, name)
            try:
                work.joinpath(name).rename(target)  # whole or not at all
            except OSError:
                if not target.exists():  # else another run wrote it meanwhile: that copy serves
                    raise
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return target
