"""Reading and running things against tables on the test S3 server: the CLI in-process, the rows as
hudi-rs and Apache Hudi read them, and what a failed write may leave behind (stray files, open uploads)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from object_store.server import S3Server
from pyarrow import fs as pafs

from hudi_bucket.core.filegroups import PARTITION_METAFILE, BaseFile
from hudi_bucket.core.metafields import META_COLUMNS
from lib.cli_runs import run
from lib.hudi_rs import snapshot
from lib.hudi_spark import is_data_file


def ok(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    """The report of a run that must succeed."""
    result = run(capsys, *argv)
    assert result.code == 0, result.err
    return result.report


def upload(s3: S3Server, root: Path, bucket: str, prefix: str) -> str:
    """Copies a local table folder to ``prefix`` in ``bucket``, leaving out Hadoop's checksum files
    (``.<name>.crc``: Hadoop's local file system writes and hides them; on S3 they would be objects every
    reader lists, and Hudi 1.2.0 fails on one beside its hashing configs). Returns its ``s3a://`` URI."""
    destination = s3.filesystem()
    for source in root.rglob("*"):
        if source.is_file() and not source.name.endswith(".crc"):
            key = f"{bucket}/{prefix}/{source.relative_to(root).as_posix()}"
            destination.create_dir(key.rpartition("/")[0])
            with destination.open_output_stream(key) as out:
                out.write(source.read_bytes())
    return f"s3a://{bucket}/{prefix}"


def s3_storage_listing(s3: S3Server, uri: str) -> dict[str, set[str]]:
    """``hudi_spark.storage_listing`` of a table on the S3 server, listed straight from it."""
    bucket, _, root = uri.removeprefix("s3a://").partition("/")
    listing: dict[str, set[str]] = {}
    for info in s3.filesystem().get_file_info(pafs.FileSelector(f"{bucket}/{root}", recursive=True)):
        partition, _, name = info.path.removeprefix(f"{bucket}/{root}/").rpartition("/")
        if (
            info.type == pafs.FileType.File
            and partition
            and not partition.startswith(".")
            and is_data_file(name)
        ):
            listing.setdefault(partition, set()).add(name)
    return listing


def put_parquet(s3: S3Server, key: str, rows: list[dict[str, Any]]) -> str:
    """A Parquet dataset of ``rows`` at ``key``; returns its ``s3a://`` URI."""
    pq.write_table(
        pa.Table.from_pylist(rows), f"{s3.bucket}/{key}/part-0.parquet", filesystem=s3.filesystem()
    )
    return s3.uri(key)


def _data_rows(columns: list[str], rows: list[dict[str, Any]]) -> list[tuple]:
    data = sorted(c for c in columns if c not in META_COLUMNS)
    return sorted((tuple(r[c] for c in data) for r in rows), key=repr)


def hudi_rs_rows(s3: S3Server, uri: str) -> list[tuple]:
    """The rows hudi-rs reads straight from S3, data columns sorted by name, in a stable order."""
    rows = snapshot(uri, s3.storage_options())
    return _data_rows(rows.column_names, rows.to_pylist())


def hudi_spark_rows(spark: Any, uri: str) -> list[tuple]:
    """The rows Apache Hudi's Spark datasource reads through S3A, laid out as ``hudi_rs_rows``."""
    frame = spark.read.format("hudi").load(uri)
    return _data_rows(frame.columns, [r.asDict() for r in frame.collect()])


def expected_rows(rows: list[dict[str, Any]]) -> list[tuple]:
    return _data_rows(list(rows[0]), rows)


def stray_files(s3: S3Server, uri: str, completed: set[str]) -> list[str]:
    """The files of the table at ``uri`` that no reader should find, listed straight from the server: a file
    in a partition folder that is not a base file of a ``completed`` instant (a data file that an aborted
    write or a rollback left behind, another tool's temporary file), and every base file of a file id and
    instant that has more than one (a task's retry beside its first attempt's file)."""
    bucket, _, root = uri.removeprefix("s3a://").partition("/")
    selector = pafs.FileSelector(f"{bucket}/{root}", recursive=True)
    stray, by_slice = [], defaultdict(list)
    for info in s3.filesystem().get_file_info(selector):
        relative = info.path.removeprefix(f"{bucket}/{root}/")
        partition, _, name = relative.rpartition("/")
        if info.type != pafs.FileType.File or relative.startswith(".hoodie/"):
            continue
        if name.startswith(PARTITION_METAFILE):  # plain, or in the base file format
            continue
        base = BaseFile.parse(partition, name)
        if base is None or base.instant not in completed:
            stray.append(relative)
        else:
            by_slice[(partition, base.file_id, base.instant)].append(relative)
    stray += [path for paths in by_slice.values() if len(paths) > 1 for path in paths]
    return sorted(stray)


def open_uploads(spark: Any, uri: str) -> list[str]:
    """The keys of the multipart uploads begun under the table at ``uri`` and neither completed nor
    aborted (ListMultipartUploads, through S3A): parts a reader never sees, but the store keeps."""
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    s3a = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    uploads = s3a.listMultipartUploads(uri.removeprefix("s3a://").partition("/")[2] + "/")
    return sorted(str(upload.getKey()) for upload in uploads)  # S3A 3.3's list
