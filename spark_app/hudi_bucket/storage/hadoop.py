"""Storage through Hadoop's FileSystem in Spark's JVM: s3a://, hdfs://, gs://, abfs://, file:// ...

Going through the JVM means Spark's own Hadoop configuration (credentials, endpoints, connector jars) applies
unchanged, exactly as for Hudi's writers. Files cross py4j whole, as Java byte arrays: fine for the small
metadata files this project reads and writes.

How atomic a write is depends on the filesystem. ``write(..., overwrite=False)`` is ``create(path, false)``:
on HDFS the NameNode refuses an existing file atomically; object stores (S3A, GCS, ABFS) in general check
and then upload, so two concurrent writers can both succeed. Object stores publish a file whole when it is
closed; HDFS shows a growing file until then. ``rename`` is atomic on HDFS, a copy then delete on object
stores.

S3A's listings go through a native S3 client when it can stand in for S3A (``native_s3``).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from py4j.java_gateway import is_instance_of
from py4j.protocol import Py4JJavaError
from pyarrow import ArrowException
from pyspark.errors import PySparkException

from hudi_bucket.errors import StorageError
from hudi_bucket.storage.base import FileInfo, is_noise, join
from hudi_bucket.storage.native_s3 import SWITCH, Child, NativeS3Lister, NotCarriedOverError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_NOT_FOUND = "java.io.FileNotFoundException"
_ALREADY_EXISTS = "org.apache.hadoop.fs.FileAlreadyExistsException"
_CHECKSUMMED = "org.apache.hadoop.fs.ChecksumFileSystem"
_S3A = "org.apache.hadoop.fs.s3a.S3AFileSystem"

_log = logging.getLogger(__name__)
Children = list[Child]  # named out here: in HadoopStorage's body, ``list`` is its method

# A Java exception reaches Python as a Py4JJavaError, or already converted by PySpark for a few classes
# (IllegalArgumentException: a malformed path, Hadoop's "Wrong FS").
_JAVA_ERRORS = (Py4JJavaError, PySparkException)

# Hadoop's object-store connectors: S3 (s3a; s3 and s3n on EMR), Google Cloud Storage, Azure Blob and
# ADLS (whose rename is atomic only with a hierarchical namespace: treating it as a copy then costs a
# thread pool, nothing else), Alibaba OSS, Tencent COS, Huawei OBS. Their rename copies every byte on
# the server, then deletes.
OBJECT_STORE_SCHEMES = frozenset(
    {"s3a", "s3", "s3n", "gs", "wasb", "wasbs", "abfs", "abfss", "oss", "cosn", "obs"}
)


class HadoopStorage:
    """Storage rooted at any URI Hadoop can open, through Spark's JVM (atomicity: see the module)."""

    def __init__(self, uri: str, spark: SparkSession) -> None:
        context = spark.sparkContext
        if context._jvm is None or context._jsc is None:  # its JVM is gone
            raise StorageError(f"{uri}: the Spark session is stopped")
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
        root_uri = self._root.toUri()
        self._scheme, self._authority = root_uri.getScheme(), root_uri.getAuthority()
        self._root_path: str = str(root_uri.getPath()).rstrip("/")
        self._is_object_store = str(fs.getScheme()).lower() in OBJECT_STORE_SCHEMES
        # The native lister is made at the first listing, once (None: S3A lists).
        self._native_lock = threading.Lock()
        self._native: NativeS3Lister | None = None
        self._native_due = bool(is_instance_of(self._gateway, fs, _S3A)) and (
            str(spark.conf.get(SWITCH, "true")).strip().lower() != "false"
        )

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

    @property
    def is_object_store(self) -> bool:
        return self._is_object_store

    def _path(self, path: str) -> Any:
        """The Hadoop Path of a relative path, built from the root's parts: ``Path(root, "day=10:00")``
        would parse "day=10" as a URI scheme (a colon before the first slash), and Hive-style partition
        values hold colons (timestamps)."""
        if not path:
            return self._root
        return self._jvm.org.apache.hadoop.fs.Path(self._scheme, self._authority, f"{self._root_path}/{path}")

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
        children = self._list_natively(path)
        if children is None:
            with self._failing_as(f"listing {self.uri}/{path}"):
                children = self._list_through_hadoop(path)
        infos = [
            FileInfo(join(path, name), size, is_dir, modified)
            for name, is_dir, size, modified in children
            if not is_noise(name)
        ]
        return sorted(infos, key=lambda i: i.path)

    def _list_through_hadoop(self, path: str) -> Children:
        folder = self._path(path)
        try:
            statuses = self._fs.listStatus(folder)
        except Py4JJavaError as exc:
            if self._is_a(exc, _NOT_FOUND):
                return []
            raise
        # Hadoop lists a file as itself; like LocalStorage, a file has no children
        return self._read_statuses(statuses, folder) or []

    def _list_natively(self, path: str) -> Children | None:
        """The children as the native S3 client lists them; None when S3A is to list."""
        lister = self._native_lister()
        if lister is None:
            return None
        try:
            return lister.list(join(self._root_path, path))
        except (ArrowException, OSError, NotCarriedOverError) as exc:
            with self._native_lock:
                if self._native is lister:  # said once, whichever of the parallel listings failed first
                    self._native = None
                    _log.warning("%s: the native S3 client failed (%s); S3A lists from now on", self.uri, exc)
            return None

    def _native_lister(self) -> NativeS3Lister | None:
        with self._native_lock:
            if self._native_due:
                self._native_due = False
                try:
                    self._native = NativeS3Lister(self._fs, self._gateway)
                except NotCarriedOverError as why:  # a warning, so that a job's log shows it unconfigured
                    _log.warning("%s: S3A lists (%s), which is slower on large partitions", self.uri, why)
            return self._native

    def _read_statuses(self, statuses: Any, folder: Any) -> Children | None:
        """(name, is_dir, size, modified_ms) of each status; None when the folder is a file.

        Each call across py4j is a round trip (tens of microseconds), and reading a status field by
        field takes six: 60,000 for a partition of 10,000 files, which made listing most of a plan's
        time on object stores. So the whole array is rendered by the JVM in one call (FileStatus's
        ``toString``, stable since Hadoop 2) and parsed here; the field-by-field path stays for a
        rendering that does not parse unambiguously."""
        folder_text = str(folder.toString())
        rendered = str(self._jvm.org.apache.commons.lang3.ArrayUtils.toString(statuses))
        children = parse_rendered_statuses(rendered, folder_text, len(statuses))
        if children is None:
            children = []
            for status in statuses:
                child = status.getPath()
                is_dir = bool(status.isDirectory())
                size = 0 if is_dir else int(status.getLen())
                children.append((str(child.getName()), is_dir, size, int(status.getModificationTime())))
                if not is_dir and child.equals(folder):
                    return None
        elif any(name == "" and not is_dir for name, is_dir, _, _ in children):
            return None
        return children

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


_FIELDS = (
    r"; isDirectory=(?P<dir>true|false)"
    r"(?:; length=(?P<size>\d+); replication=\d+; blocksize=\d+)?"
    r"; modification_time=(?P<modified>-?\d+); access_time="
)


def parse_rendered_statuses(rendered: str, folder: str, count: int) -> list[Child] | None:
    """The children in ``rendered`` (commons-lang's rendering of a FileStatus array, each element's
    ``toString``), given the listed ``folder``'s path and how many statuses there are; None unless the
    rendering holds exactly ``count`` statuses of direct children, parsed with no ambiguity. A listed
    file's own status gives the name "" (Hadoop lists a file as itself)."""
    if rendered.count("; isDirectory=") != count:
        return None  # a name holding the separator itself: no safe way to split
    prefix = re.escape(folder)
    pattern = re.compile(rf"FileStatus\{{path={prefix}(?:/(?P<name>[^/]*?))?{_FIELDS}")
    children = [
        (m["name"] or "", m["dir"] == "true", int(m["size"] or 0), int(m["modified"]))
        for m in pattern.finditer(rendered)
    ]
    return children if len(children) == count else None


def _java_message(exc: Exception) -> str:
    """The Java exception's class and message, without py4j's stack trace."""
    return str(exc.java_exception.toString()) if isinstance(exc, Py4JJavaError) else str(exc)
