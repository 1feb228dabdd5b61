"""Bucket files written by Spark at their final names, as Hudi's own writers write them.

Our commit protocol (``io.hudibucket.spark.DirectFileCommitProtocol``, in ``spark_app/jvm/``)
creates each file at the path held by the one column the frame is partitioned by: no staging folder, no
move (on an object store a move copies every byte). The files stay invisible to readers until the caller completes
its instant, and a failed write leaves them to the caller's rollback, which deletes the instant's files
by name. Without the protocol's jar (a plain Spark) the staged write (``staged_write``) runs instead.

What a staging folder showed is found otherwise: a file written by two tasks (a bucket whose rows
reached two tasks) fails the write, and each file's size and rows come from listing the written
partitions and reading the files' footers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import unquote

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException

from hudi_bucket.core.filegroups import BaseFile
from hudi_bucket.jobs.session import on_classpath, scoped_conf
from hudi_bucket.jobs.spark_paths import path_part, spark_root, table_file_uris
from hudi_bucket.storage.base import Storage, list_many

PROTOCOL_CLASS = "io.hudibucket.spark.DirectFileCommitProtocol"
FILE_COLUMN = "__hbo_file"  # each row's file, relative to the table root
_TWO_WRITERS = (f"{PROTOCOL_CLASS}$DuplicateFileException", "org.apache.hadoop.fs.FileAlreadyExistsException")
# Hadoop's local filesystem writes a ``.<name>.crc`` beside each file; the table's files carry none (its
# rollback deletes files by name). For this write only: an uncached raw local filesystem.
_NO_CHECKSUMS = {
    "fs.file.impl": "org.apache.hadoop.fs.RawLocalFileSystem",
    "fs.file.impl.disable.cache": "true",
}


def available(spark: Any) -> bool:
    """Whether this session can write final names: the protocol is loadable, and no speculative task
    attempt can race another attempt of its task for the same file (and delete it as it aborts)."""
    speculating = str(spark.conf.get("spark.speculation", "false")).lower() == "true"
    return not speculating and on_classpath(spark, PROTOCOL_CLASS)


class TwoWritersError(Exception):
    """Two tasks wrote one file; ``args[0]`` is the Java exception's message, naming it."""


def write(spark: Any, frame: Any, storage: Storage) -> None:
    """Write ``frame`` (partitioned by ``FILE_COLUMN``, which is left out of the files) into the table.
    Raises TwoWritersError when some file was written by two tasks."""
    root = spark_root(storage)
    options = _NO_CHECKSUMS if root.startswith("file:") else {}
    try:
        with scoped_conf(spark, {"spark.sql.sources.commitProtocolClass": PROTOCOL_CLASS}):
            # Append: Spark's overwrite mode would delete the output root, the table.
            frame.write.options(**options).mode("append").partitionBy(FILE_COLUMN).parquet(root)
    except (Py4JJavaError, PySparkException) as exc:
        found = _two_writers(exc)
        if found is None:
            raise
        raise TwoWritersError(found) from exc


def _two_writers(exc: Exception) -> str | None:
    """The message of the Java exception that says two tasks wrote one file, if that is what failed."""
    throwable = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    while throwable is not None:
        if str(throwable.getClass().getName()) in _TWO_WRITERS:
            return str(throwable.getMessage())
        throwable = throwable.getCause()
    return None


def written_files(storage: Storage, partitions: Sequence[str], instant: str) -> dict[str, int]:
    """The size of each base file of ``instant`` in ``partitions``, by path: one listing a partition (in
    parallel on an object store)."""
    found = {}
    for partition, entries in zip(partitions, list_many(storage, partitions), strict=True):
        for entry in entries:
            base = None if entry.is_dir else BaseFile.parse(partition, entry.name)
            if base is not None and base.instant == instant:
                found[base.path] = entry.size
    return found


def row_counts(spark: Any, storage: Storage, paths: Sequence[str], instant: str) -> Mapping[str, int]:
    """Rows per file of ``instant``, by path, from the Parquet footers (the count reads no column data).
    Spark reads the folders holding ``paths``, keeping only the instant's files: a listing a folder, where
    naming each file costs requests of its own."""
    if not paths:
        return {}
    folders = sorted({path.rpartition("/")[0] for path in paths})
    files = spark.read.option("pathGlobFilter", f"*_{instant}.parquet").parquet(
        *table_file_uris(storage, folders)
    )
    counts = files.groupBy("_metadata.file_path").count().collect()
    # Spark reports each file as a URI, its path %-encoded; the table root is written unencoded.
    prefix = path_part(spark_root(storage)).rstrip("/") + "/"
    return {unquote(path_part(uri)).removeprefix(prefix): count for uri, count in counts}
