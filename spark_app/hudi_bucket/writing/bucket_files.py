"""Write rows into bucket file groups: one Parquet base file per (partition, bucket), named as Hudi
names them (``<partition>/<fileId>_<writeToken>_<instant>.parquet``), with Hudi's meta columns rewritten
for the new instant. The files are invisible to readers until the caller completes the instant.

Where our commit protocol's jar is loaded, Spark writes each file at its final name (``direct_write``),
as Hudi's own writers do; on a plain Spark it writes into a staging folder and the files are moved into
place (``staged_write``), which on an object store copies every byte once more.

How rows reach a task decides how many files a bucket gets: ``Grouping.SHUFFLE`` sends each file's rows
to a task of its own (``core.routing``); ``Grouping.PRESERVE`` trusts that every input task already holds whole buckets
(the shuffle-free split or merge of a clean bucket layout). Either way a bucket written as more than one
file is caught, and the write fails (the caller rolls its instant back).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from enum import Enum
from typing import Any

from hudi_bucket.bucketing.bucket_ids import bucket_id_column, num_buckets_column
from hudi_bucket.core.buckets import bucket_id_from_file_id, new_bucket_file_id
from hudi_bucket.core.commits import WriteStat
from hudi_bucket.core.file_format import FileFormat
from hudi_bucket.core.filegroups import BaseFile, partition_file_path
from hudi_bucket.core.metafields import (
    COMMIT_SEQNO,
    COMMIT_TIME,
    FILE_NAME,
    META_COLUMNS,
    PARTITION_PATH,
    RECORD_KEY,
)
from hudi_bucket.core.routing import routing_keys, shuffle_width
from hudi_bucket.errors import BucketWriteError
from hudi_bucket.spark.context import TableContext
from hudi_bucket.spark.parquet_footers import sample_file
from hudi_bucket.spark.session import scoped_conf
from hudi_bucket.spark.spark_paths import spark_root
from hudi_bucket.writing import direct_write, staged_write

WRITE_TOKEN = "0-0-0"  # <task>-<stage>-<attempt>; readers only parse it, and file ids keep names unique
_PARTITION_INDEX, _BUCKET = staged_write.PARTITION_INDEX, staged_write.BUCKET
# A task keeps a file open per bucket it holds and writes each row as it comes, where Spark would first
# sort the task's rows by file (a copy of every row: a fifth of a rescale's write, measured). A task
# holds a few buckets; past this many open files Spark sorts the rest, as it would have.
FILES_SIDE_BY_SIDE = {"spark.sql.maxConcurrentOutputFileWriters": "16"}
# Parquet starts every column with a dictionary and drops it when the values outgrow it, re-encoding
# what it buffered: for a column whose values are all distinct that is every value encoded twice (a
# sixth of a rescale's write, measured). Such columns are written plain from the start.
_NO_DICTIONARY = "parquet.enable.dictionary#{column}"


class Grouping(Enum):
    SHUFFLE = "shuffle"
    PRESERVE = "preserve"


@dataclass(frozen=True)
class ExistingGroup:
    """A live file group that new rows update in place (same file id, a new base file)."""

    file_id: str
    base_instant: str


@dataclass(frozen=True)
class BucketFiles:
    """Every file a write may create, one per (partition, bucket), as a table: partition ``i``'s bucket
    ``b`` is file ``offsets[i] + b``. Rows find their file's name by that position, an array index,
    where building the name from its parts would cost a few string operations per row."""

    partitions: tuple[str, ...]
    offsets: tuple[int, ...]
    files: tuple[tuple[str, str], ...]  # (partition, file name)

    @classmethod
    def plan(
        cls, instant: str, buckets: Mapping[str, int], existing: Mapping[tuple[str, int], ExistingGroup]
    ) -> BucketFiles:
        """A new file group per (partition, bucket), its id made from one random UUID per partition (so
        unique in it: the ids differ in their bucket); where ``existing`` holds the (partition, bucket),
        its group."""
        partitions = tuple(sorted(buckets))
        offsets: list[int] = []
        files: list[tuple[str, str]] = []
        for partition in partitions:
            base = uuid.uuid4()
            offsets.append(len(files))
            for bucket in range(buckets[partition]):
                group = existing.get((partition, bucket))
                file_id = group.file_id if group else new_bucket_file_id(bucket, base)
                files.append((partition, f"{file_id}_{WRITE_TOKEN}_{instant}.parquet"))
        return cls(partitions, tuple(offsets), tuple(files))

    def names(self) -> list[str]:
        return [name for _, name in self.files]

    def paths(self) -> list[str]:
        """Each file's path relative to the table root: its partition folder, then its name."""
        return [partition_file_path(partition, name) for partition, name in self.files]

    def path(self, index: int, bucket: int) -> str:
        return partition_file_path(*self.files[self.offsets[index] + bucket])


def write_bucket_files(
    ctx: TableContext,
    rows: Any,
    *,
    instant: str,
    buckets: Mapping[str, int],
    data_columns: tuple[str, ...],
    grouping: Grouping = Grouping.SHUFFLE,
    existing: Mapping[tuple[str, int], ExistingGroup] | None = None,
    every_key_whole: bool = False,
    like: str | None = None,
) -> tuple[WriteStat, ...]:
    """Write ``rows`` (data columns plus ``_hoodie_record_key`` and ``_hoodie_partition_path``) into
    bucket files for ``instant``; ``buckets`` gives each partition's bucket count. Returns one WriteStat
    per file written. Files are in place but invisible until the caller completes the instant.
    ``every_key_whole``: see ``bucketing.bucket_id_column``. A table without meta fields gets them null,
    as Hudi writes them. The files are written as the table's are (``core.file_format``): ``like`` is
    one of its base files (a path from the table's root) to take after, if it has any."""
    from pyspark.sql import functions as F  # noqa: N812

    spark = ctx.spark
    existing = existing or {}
    files = BucketFiles.plan(instant, buckets, existing)
    index = {p: i for i, p in enumerate(files.partitions)}

    partition = F.col(PARTITION_PATH)
    bucket = bucket_id_column(
        F.col(RECORD_KEY),
        num_buckets_column(partition, buckets, 1),
        ctx.hash_fields,
        ctx.key_style,
        every_key_whole=every_key_whole,
    )
    # One withColumns, one select: each call has Spark analyse the whole plan again.
    bucketed = rows.withColumns({_BUCKET: bucket, _PARTITION_INDEX: _lookup(F, index, partition).cast("int")})
    position = _literal_array(F, files.offsets, "int")[F.col(_PARTITION_INDEX)] + F.col(_BUCKET)
    if grouping is Grouping.SHUFFLE:
        # Each file to a task of its own (two at most past the shuffle partitions): the task holding most
        # files would be the rewrite's wall time on a cluster. The route is evaluated by the shuffle, not
        # carried: the rows it moves stay as narrow as they were read, the new meta values made after.
        width = shuffle_width(len(files.files), int(spark.conf.get("spark.sql.shuffle.partitions")))
        route = _literal_array(F, routing_keys(len(files.files), width), "int")[position]
        bucketed = bucketed.repartition(width, route)
    if ctx.table.config.populate_meta_fields:
        new_meta = {
            COMMIT_TIME: F.lit(instant),
            COMMIT_SEQNO: F.concat_ws(
                "_", F.lit(instant), F.spark_partition_id(), F.monotonically_increasing_id()
            ),
            RECORD_KEY: F.col(RECORD_KEY),
            PARTITION_PATH: partition,
            FILE_NAME: _literal_array(F, files.names(), "string")[position],
        }
        meta = [new_meta[c].alias(c) for c in META_COLUMNS]
    else:
        meta = [F.lit(None).cast("string").alias(c) for c in META_COLUMNS]
    distinct = _distinct_per_file(ctx.table.config.record_key_fields, data_columns)
    with (
        _legacy_parquet_for_small_decimals(spark, rows.select(*data_columns).schema),
        scoped_conf(
            spark,
            {
                **FILES_SIDE_BY_SIDE,
                **_as_the_tables(ctx, like),
                **{_NO_DICTIONARY.format(column=c): "false" for c in distinct},
            },
        ),
    ):
        if direct_write.available(spark):
            file = position.alias(direct_write.FILE_COLUMN)
            written = _write_direct(ctx, bucketed.select(*meta, *data_columns, file), files.paths())
        else:
            written = _write_staged(
                ctx, bucketed.select(*meta, *data_columns, _PARTITION_INDEX, _BUCKET), instant, files
            )
    return tuple(_write_stat(path, size, count, existing) for path, (size, count) in sorted(written.items()))


def _as_the_tables(ctx: TableContext, like: str | None) -> dict[str, str]:
    """The session settings that write files as the table's are: its codec, row group, page and
    dictionary settings, and (written by the direct write) Hudi's footer entries of the record key."""
    sample = sample_file(ctx.spark, f"{spark_root(ctx.storage)}/{like}") if like else None
    form = FileFormat.of_table(ctx.table.config.props, sample)
    settings = {
        "spark.sql.parquet.compression.codec": form.codec,
        "parquet.block.size": str(form.block_size),
        "parquet.page.size": str(form.page_size),
        "parquet.enable.dictionary": str(form.dictionary).lower(),
    }
    if ctx.table.config.populate_meta_fields:
        settings |= direct_write.footer_settings(ctx.spark, RECORD_KEY, form.bloom)
    return settings


def _distinct_per_file(key_fields: Sequence[str], data_columns: Sequence[str]) -> tuple[str, ...]:
    """The columns whose values are all distinct in a bucket file: the sequence number (one per row),
    the record key (one row per key in a file group), and the one field it is made of, if one."""
    key_column = (key_fields[0],) if len(key_fields) == 1 and key_fields[0] in data_columns else ()
    return (COMMIT_SEQNO, RECORD_KEY, *key_column)


def _lookup(functions: Any, mapping: Mapping[str, Any], key: Any) -> Any:
    """``mapping[key]`` as a Spark column (null when absent), from a literal map."""
    if not mapping:
        return functions.lit(None).cast("string")
    pairs = [functions.lit(x) for k, v in mapping.items() for x in (k, v)]
    return functions.element_at(functions.create_map(*pairs), key)


def _literal_array(functions: Any, values: Sequence[Any], element_type: str) -> Any:
    """``values`` as one literal array column, indexed from 0. It travels as one JSON string, which the
    optimizer parses once (a literal per element would cost a Python-to-JVM call each)."""
    return functions.from_json(functions.lit(json.dumps(list(values))), f"array<{element_type}>")


def _write_direct(ctx: TableContext, frame: Any, paths: Sequence[str]) -> dict[str, tuple[int, int]]:
    """Each file at its final name; returns each file's (size, rows) by path."""
    try:
        return direct_write.write(ctx.spark, frame, ctx.storage, paths)
    except direct_write.TwoWritersError as exc:
        raise BucketWriteError(f"a bucket came out as several files ({exc.args[0]})") from exc


def _write_staged(
    ctx: TableContext, frame: Any, instant: str, files: BucketFiles
) -> dict[str, tuple[int, int]]:
    """Each file staged, then moved into place; returns each file's (size, rows) by path."""
    try:
        return staged_write.write(ctx.spark, frame, ctx.storage, instant, files.path)
    except staged_write.SplitFileError as exc:
        named = ", ".join(f"{files.partitions[p] or '(table)'} bucket {b}" for p, b in exc.args[:5])
        raise BucketWriteError(f"{len(exc.args)} bucket(s) came out as several files: {named}") from exc


def _write_stat(
    path: str, size: int, rows: int, existing: Mapping[tuple[str, int], ExistingGroup]
) -> WriteStat:
    """The commit's record of one file; a file of an existing group updates it, any other inserts."""
    partition, _, name = path.rpartition("/")
    base = BaseFile.parse(partition, name)
    assert base is not None, path  # every file written is named as a base file
    group = existing.get((partition, bucket_id_from_file_id(base.file_id)))
    update = group is not None and group.file_id == base.file_id
    return WriteStat(
        partition_path=partition,
        file_id=base.file_id,
        path=path,
        num_writes=rows,
        num_inserts=0 if update else rows,
        total_write_bytes=size,
        file_size_in_bytes=size,
        prev_commit=group.base_instant if group and update else "null",
        num_update_writes=rows if update else 0,
    )


def _legacy_parquet_for_small_decimals(spark: Any, schema: Any) -> AbstractContextManager[None]:
    """Hudi's Spark writer switches on Spark's legacy Parquet layout when a decimal fits in 18 digits,
    so that Avro-based readers (Hudi's merge handles) find the FIXED_LEN_BYTE_ARRAY they expect."""
    legacy = _has_small_decimal(schema)
    return scoped_conf(spark, {"spark.sql.parquet.writeLegacyFormat": "true"} if legacy else {})


def _has_small_decimal(data_type: Any) -> bool:
    from pyspark.sql import types as T  # noqa: N812

    if isinstance(data_type, T.DecimalType):
        return data_type.precision <= 18
    if isinstance(data_type, T.StructType):
        return any(_has_small_decimal(f.dataType) for f in data_type.fields)
    if isinstance(data_type, T.ArrayType):
        return _has_small_decimal(data_type.elementType)
    if isinstance(data_type, T.MapType):
        return _has_small_decimal(data_type.keyType) or _has_small_decimal(data_type.valueType)
    return False
