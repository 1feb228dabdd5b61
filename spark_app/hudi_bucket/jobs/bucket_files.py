"""Write rows into bucket file groups: one Parquet base file per (partition, bucket), named as Hudi
names them, with Hudi's meta columns rewritten for the new instant.

Spark writes into a staging folder split by partition index and bucket, then each file is moved to
``<partition>/<fileId>_<writeToken>_<instant>.parquet``. The instant is still pending while files move,
so readers see none of them until the caller completes it.

On an object store a move is a copy then a delete. Spark's writer cannot name its files as Hudi names
them, so one copy per file remains; the other moves are avoided: the staging write uses the committer's
algorithm 2 (a task's files go straight to the staging folder, where algorithm 1 moves them twice), and
the files are moved into place by parallel requests, not one after another.

How rows reach a task decides how many files a bucket gets: ``Grouping.SHUFFLE`` hash-partitions by
(partition, bucket); ``Grouping.PRESERVE`` trusts that every input task already holds whole buckets
(the shuffle-free split or merge of a clean bucket layout). Either way a bucket written as more than one
file is caught before anything is moved, and the write fails.
"""

from __future__ import annotations

import re
import uuid
from collections import defaultdict
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass
from enum import Enum
from typing import Any

from hudi_bucket.core.buckets import BUCKET_ID_DIGITS
from hudi_bucket.core.commits import WriteStat
from hudi_bucket.core.filegroups import partition_file_path
from hudi_bucket.core.metafields import (
    COMMIT_SEQNO,
    COMMIT_TIME,
    FILE_NAME,
    META_COLUMNS,
    PARTITION_PATH,
    RECORD_KEY,
)
from hudi_bucket.errors import HudiBucketError
from hudi_bucket.jobs.bucketing import bucket_id_column, num_buckets_column
from hudi_bucket.jobs.context import TableContext
from hudi_bucket.jobs.session import scoped_conf
from hudi_bucket.jobs.spark_paths import literal, spark_root
from hudi_bucket.storage.base import PARALLEL_REQUESTS, Storage, walk

WRITE_TOKEN = "0-0-0"  # <task>-<stage>-<attempt>; readers only parse it, and file ids keep names unique
_PARTITION_INDEX, _BUCKET = "__hbo_partition", "__hbo_bucket"
_STAGED = re.compile(rf"{_PARTITION_INDEX}=(\d+)/{_BUCKET}=(\d+)/[^/]+\.parquet$")
# A task's output goes straight into the staging folder (one copy on an object store, not two). Its
# known weakness, a failed job leaving some tasks' files in the output, is moot for a private staging
# folder that is deleted either way.
_ONE_MOVE_COMMITTER = {"mapreduce.fileoutputcommitter.algorithm.version": "2"}


class Grouping(Enum):
    SHUFFLE = "shuffle"
    PRESERVE = "preserve"


class BucketWriteError(HudiBucketError):
    """Rows of one bucket reached more than one task: the input was not laid out as promised."""

    hint = "the old layout is not bucket-correct; run `verify`, then apply with a full shuffle"


@dataclass(frozen=True)
class ExistingGroup:
    """A live file group that new rows update in place (same file id, a new base file)."""

    file_id: str
    base_instant: str


def staging_folder(instant: str) -> str:
    return f".hoodie/.temp/hudi-bucket-{instant}"


def file_id_suffixes(partitions: list[str]) -> dict[str, str]:
    """One random UUID tail per partition: ``<8-digit bucket><tail>-0`` is unique in its partition."""
    return {p: str(uuid.uuid4())[BUCKET_ID_DIGITS:] for p in partitions}


def base_file_name(file_id: str, instant: str) -> str:
    return f"{file_id}_{WRITE_TOKEN}_{instant}.parquet"


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
) -> tuple[WriteStat, ...]:
    """Write ``rows`` (data columns plus ``_hoodie_record_key`` and ``_hoodie_partition_path``) into
    bucket files for ``instant``; ``buckets`` gives each partition's bucket count. Returns one WriteStat
    per file written. Files are in place but invisible until the caller completes the instant.
    ``every_key_whole``: see ``bucketing.bucket_id_column``. A table without meta fields gets them null,
    as Hudi writes them."""
    from pyspark.sql import functions as F  # noqa: N812

    spark, storage = ctx.spark, ctx.storage
    existing = existing or {}
    partitions = sorted(buckets)
    index = {p: i for i, p in enumerate(partitions)}
    suffixes = file_id_suffixes(partitions)
    reused = {f"{p}/{b}": g.file_id for (p, b), g in existing.items()}

    partition = F.col(PARTITION_PATH)
    bucket = F.col(_BUCKET)
    new_file_id = F.concat(
        F.lpad(bucket.cast("string"), BUCKET_ID_DIGITS, "0"),
        _lookup(F, suffixes, partition),
        F.lit("-0"),
    )
    file_id = F.coalesce(_lookup(F, reused, F.concat_ws("/", partition, bucket.cast("string"))), new_file_id)
    staged = (
        rows.withColumn(
            _BUCKET,
            bucket_id_column(
                F.col(RECORD_KEY),
                num_buckets_column(partition, buckets, 1),
                ctx.hash_fields,
                ctx.key_style,
                every_key_whole=every_key_whole,
            ),
        )
        .withColumn(_PARTITION_INDEX, _lookup(F, index, partition).cast("int"))
        .withColumn(COMMIT_TIME, F.lit(instant))
        .withColumn(
            COMMIT_SEQNO,
            F.concat_ws("_", F.lit(instant), F.spark_partition_id(), F.monotonically_increasing_id()),
        )
        .withColumn(FILE_NAME, F.concat(file_id, F.lit(f"_{WRITE_TOKEN}_{instant}.parquet")))
    )
    if grouping is Grouping.SHUFFLE:
        width = max(1, min(sum(buckets.values()), int(spark.conf.get("spark.sql.shuffle.partitions"))))
        staged = staged.repartition(width, _PARTITION_INDEX, _BUCKET)
    if ctx.table.config.populate_meta_fields:
        meta = [F.col(c) for c in META_COLUMNS]
    else:
        meta = [F.lit(None).cast("string").alias(c) for c in META_COLUMNS]
    ordered = staged.select(*meta, *data_columns, _PARTITION_INDEX, _BUCKET)

    folder = staging_folder(instant)
    target = f"{spark_root(storage)}/{folder}"
    committer = _ONE_MOVE_COMMITTER if storage.is_object_store else {}
    with _legacy_parquet_for_small_decimals(spark, ordered.schema), scoped_conf(spark, committer):
        ordered.write.mode("overwrite").partitionBy(_PARTITION_INDEX, _BUCKET).parquet(target)
    try:
        targets = _Targets(instant, tuple(partitions), suffixes, existing)
        return _move_into_place(storage, folder, targets, _row_counts(spark, target))
    finally:
        storage.delete(folder, recursive=True)


def _lookup(functions: Any, mapping: Mapping[str, Any], key: Any) -> Any:
    """``mapping[key]`` as a Spark column (null when absent), from a literal map."""
    if not mapping:
        return functions.lit(None).cast("string")
    pairs = [functions.lit(x) for k, v in mapping.items() for x in (k, v)]
    return functions.element_at(functions.create_map(*pairs), key)


@dataclass(frozen=True)
class _Targets:
    """Where each staged (partition index, bucket) file goes."""

    instant: str
    partitions: tuple[str, ...]
    suffixes: Mapping[str, str]
    existing: Mapping[tuple[str, int], ExistingGroup]

    def file_id(self, partition: str, bucket: int) -> str:
        group = self.existing.get((partition, bucket))
        return group.file_id if group else f"{bucket:0{BUCKET_ID_DIGITS}d}{self.suffixes[partition]}-0"


def _move_into_place(
    storage: Storage, folder: str, targets: _Targets, counts: Mapping[tuple[int, int], int]
) -> tuple[WriteStat, ...]:
    staged: dict[tuple[int, int], list[tuple[str, int]]] = defaultdict(list)
    for info in walk(storage, folder):
        match = _STAGED.search(info.path)
        if match:
            staged[(int(match[1]), int(match[2]))].append((info.path, info.size))
    split = sorted(k for k, files in staged.items() if len(files) > 1)
    if split:
        named = ", ".join(f"{targets.partitions[p] or '(table)'} bucket {b}" for p, b in split[:5])
        raise BucketWriteError(f"{len(split)} bucket(s) came out as several files: {named}")
    stats, moves = [], []
    for (p, b), [(path, size)] in sorted(staged.items()):
        partition = targets.partitions[p]
        group = targets.existing.get((partition, b))
        file_id = targets.file_id(partition, b)
        final = partition_file_path(partition, base_file_name(file_id, targets.instant))
        moves.append((path, final))
        rows = counts.get((p, b), 0)
        stats.append(
            WriteStat(
                partition_path=partition,
                file_id=file_id,
                path=final,
                num_writes=rows,
                num_inserts=0 if group else rows,
                total_write_bytes=size,
                file_size_in_bytes=size,
                prev_commit=group.base_instant if group else "null",
                num_update_writes=rows if group else 0,
            )
        )
    _move_all(storage, moves)
    return tuple(stats)


def _move_all(storage: Storage, moves: list[tuple[str, str]]) -> None:
    """Every (staged, final) move; in parallel where a move is a copy. On the first failure the moves
    not started yet are dropped, those under way finish, and the failure is raised (the caller rolls
    the pending instant back, which deletes what was moved)."""
    if not storage.is_object_store or len(moves) < 2:
        for source, target in moves:
            storage.rename(source, target)
        return
    with ThreadPoolExecutor(min(PARALLEL_REQUESTS, len(moves)), thread_name_prefix="hbo-move") as pool:
        futures = [pool.submit(storage.rename, source, target) for source, target in moves]
        try:
            for future in futures:
                future.result()
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise


def _row_counts(spark: Any, target: str) -> dict[tuple[int, int], int]:
    """Rows per staged file, from Parquet footers (the count reads no column data)."""
    counts = spark.read.parquet(literal(target)).groupBy(_PARTITION_INDEX, _BUCKET).count().collect()
    return {(r[0], r[1]): r[2] for r in counts}


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
