"""Bucket files written by Spark at their final names, as Hudi's own writers write them.

Our commit protocol (``io.hudibucket.spark.DirectFileCommitProtocol``, in ``spark_app/jvm/``)
creates each file at its path, listed in the write's options; the one int column the frame is
partitioned by gives each row's index in that list. No staging folder, no move (on an object store a
move copies every byte). The files stay invisible to readers until the caller completes its instant,
and a failed write leaves them to the caller's rollback, which deletes the instant's files by name. Without the protocol's jar (a plain Spark) the staged write (``staged_write``) runs instead.

What a staging folder showed is found otherwise: a file written by two tasks (a bucket whose rows
reached two tasks) fails the write, and each file's size and rows are read back from its footer by the
task that wrote it, and handed over by the protocol once the job commits.
"""

from __future__ import annotations

import json
import struct
import uuid
from collections.abc import Sequence
from typing import Any

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException

from hudi_bucket.core.file_format import BloomFilter
from hudi_bucket.spark.session import java_class, on_classpath, scoped_conf
from hudi_bucket.spark.spark_paths import spark_root
from hudi_bucket.storage.base import Storage

PROTOCOL_CLASS = "io.hudibucket.spark.DirectFileCommitProtocol"
WRITE_ID = "hudibucket.direct.write.id"  # the protocol's WRITE_ID option
FILES = "hudibucket.direct.write.files"  # the protocol's FILES option
FILE_COLUMN = "__hbo_file"  # each row's file: its index in the write's files
# Hudi's footer entries in each file (``io.hudibucket.spark.HudiFooterWriteSupport``): the settings
# name the key column and the bloom filter; the filter is Hudi's own, built where its bundle is loaded.
FOOTER_KEY_COLUMN = "hudibucket.footer.key.column"
BLOOM_FACTORY = "org.apache.hudi.common.bloom.BloomFilterFactory"
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


def footer_settings(spark: Any, key_column: str, bloom: BloomFilter | None) -> dict[str, str]:
    """The settings that have Hudi's footer entries written: the min and max of ``key_column``, and its
    bloom filter where asked and Hudi's bundle is on the session (without it: none)."""
    settings = {FOOTER_KEY_COLUMN: key_column}
    if bloom and on_classpath(spark, BLOOM_FACTORY):
        settings |= {
            "hudibucket.footer.bloom.type": bloom.type_code,
            "hudibucket.footer.bloom.entries": str(bloom.entries),
            "hudibucket.footer.bloom.fpp": bloom.fpp,
            "hudibucket.footer.bloom.max.entries": str(bloom.max_entries),
        }
    return settings


class TwoWritersError(Exception):
    """Two tasks wrote one file; ``args[0]`` is the Java exception's message, naming it."""


def write(spark: Any, frame: Any, storage: Storage, files: Sequence[str]) -> dict[str, tuple[int, int]]:
    """Write ``frame`` into the table: each row into the file of ``files`` (paths relative to the table
    root) that its ``FILE_COLUMN`` indexes, a column left out of the files. Returns each file's (size,
    rows) by path. Raises TwoWritersError when some file was written by two tasks."""
    root = spark_root(storage)
    write_id = uuid.uuid4().hex
    options = {
        **(_NO_CHECKSUMS if root.startswith("file:") else {}),
        WRITE_ID: write_id,
        FILES: json.dumps(list(files)),
    }
    try:
        with scoped_conf(spark, {"spark.sql.sources.commitProtocolClass": PROTOCOL_CLASS}):
            # Append: Spark's overwrite mode would delete the output root, the table.
            frame.write.options(**options).mode("append").partitionBy(FILE_COLUMN).parquet(root)
    except (Py4JJavaError, PySparkException) as exc:
        found = _two_writers(exc)
        if found is None:
            raise
        raise TwoWritersError(found) from exc
    published = java_class(spark, PROTOCOL_CLASS).takeWritten(write_id)
    if published is None:  # the job committed without the protocol seeing our option: never commit that
        raise RuntimeError(f"{PROTOCOL_CLASS} published no files for write {write_id}")
    return parse_written(bytes(published))


def parse_written(published: bytes) -> dict[str, tuple[int, int]]:
    """The protocol's rendering of a write's files (``takeWritten``): (size, rows) by path."""
    (count,), at = struct.unpack_from(">i", published), 4
    files = {}
    for _ in range(count):
        (length,) = struct.unpack_from(">i", published, at)
        path = published[at + 4 : at + 4 + length].decode()
        files[path] = struct.unpack_from(">qq", published, at + 4 + length)
        at += 4 + length + 16
    return files


def _two_writers(exc: Exception) -> str | None:
    """The message of the Java exception that says two tasks wrote one file, if that is what failed."""
    throwable = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    while throwable is not None:
        if str(throwable.getClass().getName()) in _TWO_WRITERS:
            return str(throwable.getMessage())
        throwable = throwable.getCause()
    return None
