"""Storage through Hadoop's FileSystem in Spark's JVM: s3a://, hdfs://, gs://, abfs://, file:// ...

Going through the JVM means Spark's own Hadoop configuration (credentials, endpoints, connector jars) applies
unchanged, exactly as for Hudi's writers. Files cross py4j whole, as Java byte arrays: fine for the small
metadata files this project reads and writes.

How atomic a write is depends on the filesystem. ``write(..., overwrite=False)`` is ``create(path, false)``:
on HDFS the NameNode refuses an existing file atomically; object stores (S3A, GCS, ABFS) in general check
and then upload, so two concurrent writers can both succeed. Object stores publish a file whole when it is
closed; HDFS shows a growing file until then. ``rename`` is atomic on HDFS, a copy then delete on object
stores.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from py4j.java_gateway import is_instance_of
from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException

from hudi_bucket.errors import StorageError
from hudi_bucket.storage.base import FileInfo, is_noise, join

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_NOT_FOUND = "java.io.FileNotFoundException"
_ALREADY_EXISTS = "org.apache.hadoop.fs.FileAlreadyExistsException"
_CHECKSUMMED = "org.apache.hadoop.fs.ChecksumFileSystem"

# A Java exception reaches Python as a Py4JJavaError, or already converted by PySpark for a few classes
# (IllegalArgumentException: a malformed path, Hadoop's "Wrong FS").
_JAVA_ERRORS = (Py4JJavaError, PySparkException)


class HadoopStorage:
    """Storage rooted at any URI Hadoop can open, through Spark's JVM (atomicity: see the module)."""

    def __init__(self, uri: str, spark: SparkSession) -> None:
        context = spark.sparkContext
        self._gateway: Any = context._gateway
        self._jvm: Any = context._jvm
        conf = context._jsc.hadoopConfiguration()
        try:
            root = self._jvm.org.apache.hadoop.fs.Path(uri)
            fs = root.getFileSystem(conf)
        except _JAVA_ERRORS as exc:
            raise StorageError(
                f"{uri}: Hadoop cannot open this location ({_java_message(exc)})",
                hint="check the URI, and that the connector for its scheme (e.g. hadoop-aws for s3a://) "
                "is on Spark's classpath",
            ) from exc
        if is_instance_of(self._gateway, fs, _CHECKSUMMED):
            fs = self._without_checksums(fs, conf)
        self._fs = fs
        self._root = fs.makeQualified(root)
        self._uri: str = self._root.toString()

    def _without_checksums(self, fs: Any, conf: Any) -> Any:
        """A private instance of a checksummed filesystem (file://) that neither writes ``.crc`` side
        files nor fails reading a file whose side file went stale. Private, because the cached instance
        is shared with Spark and Hudi, whose settings we must not change."""
        private = self._jvm.org.apache.hadoop.util.ReflectionUtils.newInstance(fs.getClass(), conf)
        private.initialize(fs.getUri(), conf)
        private.setWriteChecksum(False)
        private.setVerifyChecksum(False)
        return private

    @property
    def uri(self) -> str:
        return self._uri

    def _path(self, path: str) -> Any:
        return self._jvm.org.apache.hadoop.fs.Path(self._root, path) if path else self._root

    def _is_a(self, exc: Py4JJavaError, java_class: str) -> bool:
        return bool(is_instance_of(self._gateway, exc.java_exception, java_class))

    @contextmanager
    def _failing_as(self, action: str) -> Iterator[None]:
        """Report any other Java exception as a StorageError saying what we were doing."""
        try:
            yield
        except _JAVA_ERRORS as exc:
            raise StorageError(f"{action} failed: {_java_message(exc)}") from exc

    def exists(self, path: str) -> bool:
        with self._failing_as(f"checking {self.uri}/{path}"):
            return bool(self._fs.exists(self._path(path)))

    def list(self, path: str) -> list[FileInfo]:
        with self._failing_as(f"listing {self.uri}/{path}"):
            folder = self._path(path)
            try:
                statuses = self._fs.listStatus(folder)
            except Py4JJavaError as exc:
                if self._is_a(exc, _NOT_FOUND):
                    return []
                raise
            infos = []
            for status in statuses:
                child = status.getPath()
                is_dir = bool(status.isDirectory())
                if not is_dir and child.equals(folder):
                    return []  # Hadoop lists a file as itself; like LocalStorage, a file has no children
                name = child.getName()
                if not is_noise(name):
                    size = 0 if is_dir else int(status.getLen())
                    infos.append(FileInfo(join(path, name), size, is_dir, int(status.getModificationTime())))
        return sorted(infos, key=lambda i: i.path)

    def read(self, path: str) -> bytes:
        with self._failing_as(f"reading {self.uri}/{path}"):
            target = self._path(path)
            try:
                stream = self._fs.open(target)
            except Py4JJavaError as exc:
                if not self._is_a(exc, _NOT_FOUND):
                    raise
                if self._fs.exists(target):
                    raise StorageError(f"{self.uri}/{path} is a folder, not a file") from None
                raise StorageError(f"{self.uri}/{path} does not exist") from None
            try:
                return bytes(self._jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
            finally:
                stream.close()

    def write(self, path: str, data: bytes, *, overwrite: bool = False) -> None:
        """Create the file (and its parent folders) in one ``create``; see the module for atomicity."""
        with self._failing_as(f"writing {self.uri}/{path}"):
            try:
                stream = self._fs.create(self._path(path), overwrite)
            except Py4JJavaError as exc:
                if overwrite or not self._is_a(exc, _ALREADY_EXISTS):
                    raise
                raise StorageError(
                    f"{self.uri}/{path} already exists", hint="another writer may be active"
                ) from None
            try:
                if data:
                    stream.write(bytearray(data))
            finally:
                stream.close()

    def delete(self, path: str, *, recursive: bool = False) -> None:
        with self._failing_as(f"deleting {self.uri}/{path}"):
            target = self._path(path)
            try:
                status = self._fs.getFileStatus(target)
            except Py4JJavaError as exc:
                if self._is_a(exc, _NOT_FOUND):
                    return
                raise
            # Hadoop deletes an empty folder even when not recursive; refuse any folder, as LocalStorage does.
            if status.isDirectory() and not recursive:
                raise StorageError(f"{self.uri}/{path} is a folder; refusing a non-recursive delete")
            self._fs.delete(target, recursive)

    def rename(self, src: str, dst: str) -> None:
        """Refuses an existing ``dst`` up front: Hadoop would move a folder *into* an existing folder."""
        with self._failing_as(f"moving {self.uri}/{src} to {dst}"):
            source, target = self._path(src), self._path(dst)
            if self._fs.exists(target):
                raise StorageError(f"cannot move {src} to {dst}: {dst} exists")
            if not self._fs.exists(source):
                raise StorageError(f"cannot move {src}: it does not exist")
            self._fs.mkdirs(target.getParent())
            if not self._fs.rename(source, target):
                raise StorageError(f"cannot move {src} to {dst}: the filesystem refused")


def _java_message(exc: Exception) -> str:
    """The Java exception's class and message, without py4j's stack trace."""
    return str(exc.java_exception.toString()) if isinstance(exc, Py4JJavaError) else str(exc)
