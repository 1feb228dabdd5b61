"""On ``s3a://``, listings go through a native S3 client (pyarrow's) set up from S3A's own settings and
credentials: it lists exactly what S3A lists, retries throttling, and hands listing back to S3A whenever
it cannot stand in for it."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from object_store.conftest import UploadTable
from object_store.faults import SlowDownProxy
from object_store.server import S3Server

from hudi_bucket.storage import FileInfo
from hudi_bucket.storage.base import list_many
from hudi_bucket.storage.hadoop import HadoopStorage
from hudi_bucket.storage.native_s3 import SWITCH, NativeS3Lister

# Names S3 keys may hold and listings must give back as they are.
ODD_NAMES = ["2025 11 11", "São Paulo", "100%", "東京", "dt=10:00", "a%20b", "x;y=z"]


@pytest.fixture
def through_s3a(spark: Any) -> Callable[[str], HadoopStorage]:
    """HadoopStorage with native listing switched off, as a user switches it off."""

    def make(uri: str) -> HadoopStorage:
        spark.conf.set(SWITCH, "false")
        try:
            return HadoopStorage(uri, spark)
        finally:
            spark.conf.unset(SWITCH)

    return make


@pytest.fixture
def hadoop_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger="hudi_bucket.storage.hadoop")
    return caplog


ALL_PAGES = ("object_list_request", "object_continue_list_request")


def s3a_lists(spark: Any, uri: str, pages: tuple[str, ...] = ALL_PAGES) -> int:
    """How many LIST requests S3A has made in this run (its own statistics; one FileSystem per bucket),
    first pages and further pages."""
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    counters = spark._jvm.org.apache.hadoop.fs.Path(uri).getFileSystem(conf).getIOStatistics().counters()
    return sum(int(counters.get(name) or 0) for name in pages)


def every_folder(storage: HadoopStorage, path: str = "") -> Iterator[tuple[str, list[FileInfo]]]:
    listed = storage.list(path)
    yield path, listed
    for info in listed:
        if info.is_dir:
            yield from every_folder(storage, info.path)


def test_the_native_client_lists_exactly_what_s3a_lists(
    spark: Any,
    s3: S3Server,
    s3_prefix: str,
    upload_table: UploadTable,
    written_table: Callable[[str], Path],
    through_s3a: Callable[[str], HadoopStorage],
    hadoop_log: pytest.LogCaptureFixture,
) -> None:
    uri = upload_table(written_table("cow_v9_meta"), s3_prefix)
    fs = s3.filesystem()
    for name in ODD_NAMES:
        with fs.open_output_stream(f"{s3.bucket}/{s3_prefix}/odd/{name}/{name}.parquet") as out:
            out.write(name.encode())
    fs.create_dir(f"{s3.bucket}/{s3_prefix}/odd/empty")  # a folder marker and nothing below it
    with fs.open_output_stream(f"{s3.bucket}/{s3_prefix}/odd/a/b/c/deep") as out:
        out.write(b"")

    native, s3a = HadoopStorage(uri, spark), through_s3a(uri)
    lists_before = s3a_lists(spark, uri)
    folders = dict(every_folder(native))
    assert s3a_lists(spark, uri) == lists_before, "S3A listed: the native client did not"
    assert folders == dict(every_folder(s3a))
    assert s3a_lists(spark, uri) > lists_before
    assert len(folders) > 10
    assert {i.name for i in folders["odd"]} == {*ODD_NAMES, "empty", "a"}
    assert folders["odd/empty"] == []
    partition = next(p for p, listed in folders.items() if any(i.name.endswith(".parquet") for i in listed))
    a_file = next(i.path for i in folders[partition] if not i.is_dir)
    for path in (a_file, "no/such/folder"):
        assert native.list(path) == s3a.list(path) == []
    assert list_many(native, list(folders)) == list(folders.values())
    assert not hadoop_log.records


@pytest.mark.parametrize("root", ["s3a://rooted", "s3a://rooted/"])
def test_a_table_at_the_root_of_its_bucket_is_listed_as_s3a_lists_it(
    spark: Any, s3: S3Server, root: str, through_s3a: Callable[[str], HadoopStorage]
) -> None:
    fs = s3.filesystem()
    fs.create_dir("rooted")
    for key in ("p/f.parquet", ".hoodie/hoodie.properties", "q r/f.parquet"):
        with fs.open_output_stream(f"rooted/{key}") as out:
            out.write(b"abc")
    native, s3a = HadoopStorage(root, spark), through_s3a(root)
    lists_before = s3a_lists(spark, root)
    listed = [native.list(folder) for folder in ("", "p", "q r")]
    assert s3a_lists(spark, root) == lists_before
    assert listed == [s3a.list(folder) for folder in ("", "p", "q r")]
    assert [[i.path for i in infos] for infos in listed] == [
        [".hoodie", "p", "q r"],
        ["p/f.parquet"],
        ["q r/f.parquet"],
    ]


def test_a_folder_longer_than_a_page_is_listed_whole(
    spark: Any, s3: S3Server, s3_prefix: str, through_s3a: Callable[[str], HadoopStorage]
) -> None:
    """The server answers 1,000 keys a page, as S3 does: both clients follow the continuation."""
    fs = s3.filesystem()

    def put(n: int) -> None:
        with fs.open_output_stream(f"{s3.bucket}/{s3_prefix}/p/{n:05d}.parquet") as out:
            out.write(b"x" * (n % 7))

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(put, range(1_050)))
    uri = s3.uri(s3_prefix)
    native = HadoopStorage(uri, spark).list("p")
    further_pages = s3a_lists(spark, uri, ("object_continue_list_request",))
    assert through_s3a(uri).list("p") == native
    assert s3a_lists(spark, uri, ("object_continue_list_request",)) == further_pages + 1
    assert [(i.name, i.size) for i in native] == [(f"{n:05d}.parquet", n % 7) for n in range(1_050)]


def test_throttled_listings_are_retried_by_the_native_client(
    spark: Any, s3: S3Server, s3_prefix: str, hadoop_log: pytest.LogCaptureFixture
) -> None:
    """Every other request answered 503 SlowDown: each listing is retried, none is handed to S3A."""
    bucket = "throttled-listing"
    fs = s3.filesystem()
    fs.create_dir(bucket)
    folders = [f"p={n}" for n in range(8)]
    for folder in folders:
        with fs.open_output_stream(f"{bucket}/{s3_prefix}/{folder}/f.parquet") as out:
            out.write(b"12345")
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    with SlowDownProxy(s3.port, every=2) as proxy:
        conf.set(f"fs.s3a.bucket.{bucket}.endpoint", proxy.endpoint)  # the native client takes it too
        uri = f"s3a://{bucket}/{s3_prefix}"
        storage = HadoopStorage(uri, spark)
        listed = list_many(storage, folders)
    assert [[(i.name, i.size) for i in infos] for infos in listed] == [[("f.parquet", 5)]] * len(folders)
    assert proxy.throttled >= len(folders) // 2
    assert s3a_lists(spark, uri) == 0
    assert not hadoop_log.records


def test_when_the_native_client_fails_s3a_lists_from_then_on(
    spark: Any,
    s3: S3Server,
    s3_prefix: str,
    monkeypatch: pytest.MonkeyPatch,
    hadoop_log: pytest.LogCaptureFixture,
) -> None:
    """Listings in parallel all fail at once: each is made by S3A instead, and it is said once."""
    folders = [f"p={n}" for n in range(6)]
    for folder in folders:
        with s3.filesystem().open_output_stream(f"{s3.bucket}/{s3_prefix}/{folder}/f") as out:
            out.write(b"x")
    storage = HadoopStorage(s3.uri(s3_prefix), spark)
    calls = []

    def failing(self: NativeS3Lister, key: str) -> list[Any]:
        calls.append(key)
        raise OSError("AWS Error NETWORK_CONNECTION during ListObjectsV2 operation: TLS handshake failed")

    monkeypatch.setattr(NativeS3Lister, "list", failing)
    assert [[i.path for i in infos] for infos in list_many(storage, folders)] == [[f"{f}/f"] for f in folders]
    tried = len(calls)
    assert [i.path for i in storage.list("p=0")] == ["p=0/f"]
    assert len(calls) == tried
    assert [r.levelname for r in hadoop_log.records] == ["WARNING"]
    assert "the native S3 client failed (AWS Error NETWORK_CONNECTION" in hadoop_log.text
    assert "S3A lists from now on" in hadoop_log.text


@pytest.mark.parametrize(
    ("bucket", "setting", "value", "why"),
    [
        ("listing-v1", "list.version", "1", "S3A is set up with ListObjects version 1 (fs.s3a.list.version)"),
        # Hadoop reads hexadecimal integers; what the native client cannot read, it leaves to S3A.
        ("listing-hex", "attempts.maximum", "0x3", "S3A's settings could not be read: invalid literal"),
    ],
)
def test_s3a_lists_a_bucket_set_up_in_a_way_the_native_client_does_not_copy(
    spark: Any,
    s3: S3Server,
    s3_prefix: str,
    hadoop_log: pytest.LogCaptureFixture,
    bucket: str,
    setting: str,
    value: str,
    why: str,
) -> None:
    """A per-bucket setting (S3A applies them to the bucket's filesystem) the native client lacks."""
    s3.filesystem().create_dir(bucket)
    with s3.filesystem().open_output_stream(f"{bucket}/{s3_prefix}/p/f") as out:
        out.write(b"x")
    spark.sparkContext._jsc.hadoopConfiguration().set(f"fs.s3a.bucket.{bucket}.{setting}", value)
    uri = f"s3a://{bucket}/{s3_prefix}"
    assert [i.path for i in HadoopStorage(uri, spark).list("p")] == ["p/f"]
    assert s3a_lists(spark, uri) == 1
    assert [r.levelname for r in hadoop_log.records] == ["WARNING"]
    assert f"S3A lists ({why}" in hadoop_log.text
