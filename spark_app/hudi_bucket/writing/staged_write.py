"""Bucket files written into a staging folder, then moved to their final names: the write of a Spark
without our commit protocol's jar (``direct_write`` writes final names directly).

Spark writes the frame partitioned by partition index and bucket into ``.hoodie/.temp/hudi-bucket-<instant>``
(short folder names, whatever the partition paths), then each file is moved to the final path the caller
gives its (partition index, bucket). The instant is still pending while files move, so readers see none of them until the
caller completes it.

On an object store a move is a copy then a delete, so one copy of every byte remains; the other moves
are avoided: the staging write uses the committer's algorithm 2 (a task's files go straight to the
staging folder, where algorithm 1 moves them twice), and the files are moved by parallel requests.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from hudi_bucket.spark.session import scoped_conf
from hudi_bucket.spark.spark_paths import literal, spark_root
from hudi_bucket.storage.base import PARALLEL_REQUESTS, Storage, walk

PARTITION_INDEX, BUCKET = "__hbo_partition", "__hbo_bucket"
_STAGED = re.compile(rf"{PARTITION_INDEX}=(\d+)/{BUCKET}=(\d+)/[^/]+\.parquet$")
# A task's output goes straight into the staging folder (one copy on an object store, not two). Its
# known weakness, a failed job leaving some tasks' files in the output, is moot for a private staging
# folder that is deleted either way.
_ONE_MOVE_COMMITTER = {"mapreduce.fileoutputcommitter.algorithm.version": "2"}


class SplitFileError(Exception):
    """Some buckets came out as several staged files; ``args`` are their (partition index, bucket)."""


def staging_folder(instant: str) -> str:
    return f".hoodie/.temp/hudi-bucket-{instant}"


def write(
    spark: Any, frame: Any, storage: Storage, instant: str, final_path: Callable[[int, int], str]
) -> dict[str, tuple[int, int]]:
    """Write ``frame`` (partitioned by ``PARTITION_INDEX`` and ``BUCKET``) and move each file to its
    ``final_path(partition index, bucket)``. Returns each file's (size, rows) by final path; raises
    SplitFileError, before moving anything, when a bucket came out as several files."""
    folder = staging_folder(instant)
    target = f"{spark_root(storage)}/{folder}"
    committer = _ONE_MOVE_COMMITTER if storage.is_object_store else {}
    with scoped_conf(spark, committer):
        frame.write.mode("overwrite").partitionBy(PARTITION_INDEX, BUCKET).parquet(target)
    try:
        staged: dict[tuple[int, int], list[tuple[str, int]]] = defaultdict(list)
        for info in walk(storage, folder):
            match = _STAGED.search(info.path)
            if match:
                staged[(int(match[1]), int(match[2]))].append((info.path, info.size))
        split = sorted(key for key, files in staged.items() if len(files) > 1)
        if split:
            raise SplitFileError(*split)
        counts = _row_counts(spark, target)
        finals = {key: final_path(*key) for key in staged}
        _move_all(storage, [(source, finals[key]) for key, [(source, _)] in sorted(staged.items())])
        return {finals[key]: (size, counts.get(key, 0)) for key, [(_, size)] in staged.items()}
    finally:
        storage.delete(folder, recursive=True)


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
    """Rows per staged file, from Parquet footers (the count reads no column data). The folder names'
    values are typed here, not by the session: with partition type inference off (as Hudi's bootstrap
    leaves a session) they are strings."""
    counts = spark.read.parquet(literal(target)).groupBy(PARTITION_INDEX, BUCKET).count().collect()
    return {(int(r[0]), int(r[1])): r[2] for r in counts}
