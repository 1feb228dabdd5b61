"""The storage contract, checked against every backend: LocalStorage, and HadoopStorage on file:// and on
s3a:// (a real S3 server, tests/object_store), listing there through the native S3 client or through S3A."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hudi_bucket.errors import StorageError
from hudi_bucket.storage import FileInfo, LocalStorage, Storage, native_s3, storage_for, walk
from hudi_bucket.storage.hadoop import HadoopStorage
from lib.paths import ALL_TABLES
from lib.written_tables import TABLES

ON_DISK = ["local", pytest.param("hadoop", marks=pytest.mark.spark)]
EVERY_BACKEND = [
    *ON_DISK,
    pytest.param("s3a", marks=pytest.mark.spark),
    pytest.param("s3a listed by S3A", marks=pytest.mark.spark),
]


def backend(name: str, request: pytest.FixtureRequest, tmp_path: Path) -> Storage:
    """A backend rooted at this test's temp folder, or at a fresh prefix of the S3 server's bucket."""
    if name == "local":
        return LocalStorage(tmp_path)
    if name.startswith("s3a"):
        s3, spark = request.getfixturevalue("s3"), request.getfixturevalue("spark")
        if name != "s3a":
            spark.conf.set(native_s3.SWITCH, "false")
        try:
            return HadoopStorage(s3.uri(s3.fresh_prefix("contract")), spark)
        finally:
            spark.conf.unset(native_s3.SWITCH)
    return HadoopStorage(tmp_path.as_uri(), request.getfixturevalue("spark"))


@pytest.fixture(params=EVERY_BACKEND)
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Storage:
    return backend(request.param, request, tmp_path)


@pytest.fixture(params=ON_DISK)
def on_disk(request: pytest.FixtureRequest, tmp_path: Path) -> Storage:
    """A backend rooted at this test's temp folder, for tests that put things there behind its back."""
    return backend(request.param, request, tmp_path)


def test_a_written_file_reads_back(storage: Storage) -> None:
    storage.write("a/b/c.json", b'{"x": 1}')
    assert storage.read("a/b/c.json") == b'{"x": 1}'
    assert storage.exists("a/b/c.json")
    assert storage.exists("a/b")


def test_every_byte_value_survives(storage: Storage) -> None:
    data = bytes(range(256)) * 3
    storage.write("binary", data)
    assert storage.read("binary") == data


def test_an_empty_file_survives(storage: Storage) -> None:
    storage.write("empty", b"")
    assert storage.read("empty") == b""


def test_create_only_write_refuses_an_existing_file(storage: Storage) -> None:
    storage.write("f", b"first")
    with pytest.raises(StorageError, match="already exists"):
        storage.write("f", b"second")
    assert storage.read("f") == b"first"


def test_overwrite_replaces_the_content(storage: Storage) -> None:
    storage.write("f", b"a much longer first version")
    storage.write("f", b"short", overwrite=True)
    assert storage.read("f") == b"short"


@pytest.mark.spark
def test_an_overwritten_file_stays_readable_by_hadoop(on_disk: Storage, tmp_path: Path, spark: Any) -> None:
    """Hudi writes local tables through Hadoop's checksummed LocalFileSystem (``.name.crc`` beside each
    file); after we overwrite such a file (hoodie.properties), Hadoop must still read it."""
    jvm = spark.sparkContext._jvm
    checksummed = jvm.org.apache.hadoop.fs.FileSystem.getLocal(spark.sparkContext._jsc.hadoopConfiguration())
    path = jvm.org.apache.hadoop.fs.Path((tmp_path / "f").as_uri())
    out = checksummed.create(path, True)
    out.write(bytearray(b"written by Hudi"))
    out.close()
    assert (tmp_path / ".f.crc").exists()

    on_disk.write("f", b"ours", overwrite=True)

    assert bytes(jvm.org.apache.commons.io.IOUtils.toByteArray(checksummed.open(path))) == b"ours"


def test_overwrite_creates_a_missing_file(storage: Storage) -> None:
    storage.write("new/f", b"x", overwrite=True)
    assert storage.read("new/f") == b"x"


def test_list_gives_direct_children_sorted_with_sizes_and_folders(storage: Storage) -> None:
    storage.write("t/b.parquet", b"12345")
    storage.write("t/a.log", b"1")
    storage.write("t/dt=2025-01-01/x", b"123")
    storage.write("t/.hoodie/hoodie.properties", b"k=v\n")
    assert storage.list("t") == [
        FileInfo("t/.hoodie", 0, True),
        FileInfo("t/a.log", 1, False),
        FileInfo("t/b.parquet", 5, False),
        FileInfo("t/dt=2025-01-01", 0, True),
    ]
    # (the root may also hold the hidden scratch folder .hoodie/.temp that writes go through)
    assert next(i for i in storage.list("") if not i.name.startswith(".")) == FileInfo("t", 0, True)


def test_listings_give_modification_times_that_a_rewrite_moves_on(storage: Storage) -> None:
    """Hudi's heartbeats are empty files whose modification time is the last beat."""
    storage.write("hb/t", b"")
    [first] = storage.list("hb")
    assert abs(first.modified_ms - time.time() * 1000) < 60_000
    time.sleep(1.1)  # some filesystems keep whole seconds
    storage.write("hb/t", b"", overwrite=True)
    [second] = storage.list("hb")
    assert second.modified_ms > first.modified_ms


def test_a_missing_folder_lists_empty(storage: Storage) -> None:
    assert storage.list("no/such/folder") == []
    assert not storage.exists("no/such/folder")


def test_a_file_has_no_children(storage: Storage) -> None:
    storage.write("f", b"x")
    assert storage.list("f") == []


def test_names_hudi_uses_round_trip(storage: Storage) -> None:
    """Hive-style and url-encoded partition names, spaces and non-ASCII survive write, list and read."""
    names = ["dt=2025-01-01", "city=S%C3%A3o Paulo", "région=é", "a b"]
    for name in names:
        storage.write(f"{name}/f", name.encode())
    assert [info.path for info in storage.list("") if not info.name.startswith(".")] == sorted(names)
    for name in names:
        assert storage.read(f"{name}/f") == name.encode()


def test_listings_skip_os_and_checksum_noise(on_disk: Storage, tmp_path: Path) -> None:
    """Finder files, zip resource forks and Hadoop's ``.name.crc`` side files are never part of a table."""
    on_disk.write("p/data.parquet", b"x")
    for noise in [".DS_Store", "._data.parquet", ".data.parquet.crc", "__MACOSX/._x"]:
        (tmp_path / "p" / noise).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "p" / noise).write_bytes(b"noise")
    assert on_disk.list("p") == [FileInfo("p/data.parquet", 1, False)]


def test_walk_yields_every_file_depth_first(storage: Storage) -> None:
    for path in ["z", "a/2", "a/1", "a/b/3", "c/d/e/4"]:
        storage.write(path, path.encode())
    assert [(info.path, info.size) for info in walk(storage)] == [
        ("a/1", 3),
        ("a/2", 3),
        ("a/b/3", 5),
        ("c/d/e/4", 7),
        ("z", 1),
    ]
    assert [info.path for info in walk(storage, "a")] == ["a/1", "a/2", "a/b/3"]


def test_delete_removes_a_file(storage: Storage) -> None:
    storage.write("d/f", b"x")
    storage.delete("d/f")
    assert not storage.exists("d/f")
    assert storage.exists("d")


def test_recursive_delete_removes_a_folder_tree(storage: Storage) -> None:
    storage.write("d/e/f", b"x")
    storage.write("d/g", b"x")
    storage.delete("d", recursive=True)
    assert not storage.exists("d")


def test_deleting_what_is_absent_is_fine(storage: Storage) -> None:
    storage.delete("nothing/here")
    storage.delete("nothing", recursive=True)


def test_non_recursive_delete_refuses_a_folder(on_disk: Storage, tmp_path: Path) -> None:
    on_disk.write("d/f", b"x")
    (tmp_path / "empty").mkdir()
    for folder in ["d", "empty"]:
        with pytest.raises(StorageError, match="folder"):
            on_disk.delete(folder)
        assert on_disk.exists(folder)


def test_rename_moves_a_file_creating_parents(storage: Storage) -> None:
    storage.write("src", b"x")
    storage.rename("src", "new/parent/dst")
    assert not storage.exists("src")
    assert storage.read("new/parent/dst") == b"x"


def test_rename_moves_a_folder(storage: Storage) -> None:
    storage.write("from/a/f", b"x")
    storage.rename("from", "to")
    assert [info.path for info in walk(storage)] == ["to/a/f"]


@pytest.mark.parametrize("existing", ["file", "folder"])
def test_rename_refuses_an_existing_destination(storage: Storage, existing: str) -> None:
    storage.write("src/f", b"src")
    storage.write("dst/f" if existing == "folder" else "dst", b"dst")
    with pytest.raises(StorageError, match="exists"):
        storage.rename("src", "dst")
    assert storage.read("src/f") == b"src"
    assert [info.path for info in walk(storage, "dst")] == (["dst/f"] if existing == "folder" else [])


def test_rename_of_a_missing_source_fails(storage: Storage) -> None:
    with pytest.raises(StorageError, match="does not exist"):
        storage.rename("missing", "dst")


def test_reading_a_missing_file_names_it(storage: Storage) -> None:
    with pytest.raises(StorageError, match=r"\.hoodie/missing\.properties does not exist"):
        storage.read(".hoodie/missing.properties")


def test_reading_a_folder_fails_clearly(storage: Storage) -> None:
    storage.write("d/f", b"x")
    with pytest.raises(StorageError, match="d is a folder"):
        storage.read("d")


def test_storage_for_a_plain_path_or_file_uri_is_local(tmp_path: Path) -> None:
    assert isinstance(storage_for(str(tmp_path)), LocalStorage)
    assert isinstance(storage_for(tmp_path.as_uri()), LocalStorage)
    assert storage_for(tmp_path.as_uri()).uri == storage_for(str(tmp_path)).uri


def test_storage_for_a_remote_scheme_needs_spark() -> None:
    with pytest.raises(StorageError, match=r"s3a://") as caught:
        storage_for("s3a://bucket/warehouse/table")
    assert "Spark job" in str(caught.value)


@pytest.mark.spark
def test_storage_for_a_remote_scheme_goes_through_hadoop(spark: Any) -> None:
    """With Spark, a remote scheme reaches Hadoop; without its connector's jar (the tests' session has
    S3A's, not Google Cloud Storage's) that is a clear StorageError naming the connector."""
    assert storage_for("s3a://bucket/table", spark).is_object_store
    with pytest.raises(StorageError, match=r"gs://bucket/table: Hadoop cannot open.*connector"):
        storage_for("gs://bucket/table", spark)


@pytest.mark.spark
def test_hadoop_storage_writes_no_checksum_files(spark: Any, tmp_path: Path) -> None:
    storage = HadoopStorage(tmp_path.as_uri(), spark)
    storage.write("d/f", b"x")
    storage.write("d/f", b"y", overwrite=True)
    storage.rename("d/f", "d/g")
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["g"]


@pytest.mark.spark
def test_hadoop_storage_reads_past_a_stale_checksum_file(spark: Any, tmp_path: Path) -> None:
    """A ``.crc`` left behind by another tool must not make the data file unreadable."""
    (tmp_path / "f").write_bytes(b"new content")
    (tmp_path / ".f.crc").write_bytes(b"crc\x00\x00\x02\x00garbage")
    assert HadoopStorage(tmp_path.as_uri(), spark).read("f") == b"new content"


@pytest.mark.spark
def test_a_colon_in_the_first_segment_is_a_name_not_a_scheme(storage: Storage) -> None:
    """Hadoop's Path reads a colon before the first slash as a URI scheme; Hive-style partition folders
    of timestamps (``ts=2025-11-11 10:00:00``) have one."""
    storage.write("ts=2025-11-11 10:00:00/f", b"x")
    assert [i.name for i in storage.list("")] == ["ts=2025-11-11 10:00:00"]
    assert storage.read("ts=2025-11-11 10:00:00/f") == b"x"
    storage.rename("ts=2025-11-11 10:00:00", "a:b")
    assert storage.read("a:b/f") == b"x"


@pytest.mark.spark
def test_hadoop_storage_uri_is_the_qualified_root(spark: Any, tmp_path: Path) -> None:
    assert HadoopStorage(f"{tmp_path.as_uri()}/", spark).uri == f"file:{tmp_path}"


def assert_lists_identically_through_both_backends(spark: Any, root: Path) -> None:
    local = [(info.path, info.size) for info in walk(LocalStorage(root))]
    hadoop = [(info.path, info.size) for info in walk(HadoopStorage(root.as_uri(), spark))]
    assert hadoop == local
    assert any(path.endswith("hoodie.properties") for path, _ in local)


@pytest.mark.parametrize("table", ALL_TABLES)
def test_a_real_table_lists_identically_through_both_backends(
    spark: Any, fixture_table: Callable[[str], Path], table: str
) -> None:
    assert_lists_identically_through_both_backends(spark, fixture_table(table))


@pytest.mark.parametrize("table", list(TABLES))
def test_a_table_hudi_writes_lists_identically_through_both_backends(
    spark: Any, written_table: Callable[[str], Path], table: str
) -> None:
    assert_lists_identically_through_both_backends(spark, written_table(table))


def test_a_write_leaves_nothing_beside_its_target(storage: Storage) -> None:
    # Hudi fails on stray files in folders it lists by name (e.g. the hashing_config versions).
    storage.write("configs/1.hashing_config", b"{}")
    storage.write("configs/1.hashing_config", b"{ }", overwrite=True)
    with pytest.raises(StorageError):
        storage.write("configs/1.hashing_config", b"{}")
    assert [i.name for i in storage.list("configs")] == ["1.hashing_config"]
