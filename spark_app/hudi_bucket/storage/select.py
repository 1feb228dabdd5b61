"""Choose a storage backend for a table URI."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from hudi_bucket.errors import StorageError
from hudi_bucket.storage.base import Storage
from hudi_bucket.storage.local import LocalStorage


def storage_for(uri: str, spark: Any | None = None) -> Storage:
    """Local paths and ``file:`` URIs get LocalStorage; any other scheme goes through Hadoop's
    FileSystem in Spark's JVM (so s3a://, hdfs://, gs://, abfs:// use Spark's own configuration)."""
    scheme = urlparse(uri).scheme
    if scheme in ("", "file"):
        return LocalStorage(uri)
    if spark is None:
        raise StorageError(
            f"{uri}: the {scheme}:// scheme is reached through Hadoop's FileSystem",
            hint="run this inside a Spark job (hudi-bucket-job), which has the Hadoop configuration",
        )
    from hudi_bucket.storage.hadoop import HadoopStorage

    return HadoopStorage(uri, spark)
