"""HadoopStorage reads a whole listing in one call across py4j by parsing FileStatus's rendering, and
falls back to reading status by status whenever that rendering could be split two ways."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hudi_bucket.storage import hadoop
from hudi_bucket.storage.hadoop import HadoopStorage, parse_rendered_statuses

FOLDER = "s3a://lake/t/day=2025-11-11"


def rendered(*children: str) -> str:
    """What commons-lang renders for an array of S3A statuses (as captured from S3A 3.3.4)."""
    return "{" + ",".join(children) + "}"


def file_status(name: str, size: int = 3, modified: int = 1795481969000) -> str:
    return (
        f"S3AFileStatus{{path={FOLDER}/{name}; isDirectory=false; length={size}; replication=1; "
        f"blocksize=33554432; modification_time={modified}; access_time=0; owner=root; group=root; "
        "permission=rw-rw-rw-; isSymlink=false; hasAcl=false; isEncrypted=true; isErasureCoded=false} "
        "isEmptyDirectory=FALSE eTag=d16fb36f0911f878998c136191af705e versionId=null"
    )


def dir_status(name: str) -> str:
    return (
        f"S3AFileStatus{{path={FOLDER}/{name}; isDirectory=true; modification_time=0; access_time=0; "
        "owner=root; group=root; permission=rwxrwxrwx; isSymlink=false; hasAcl=false; isEncrypted=true; "
        "isErasureCoded=false} isEmptyDirectory=FALSE eTag=null versionId=null"
    )


def test_files_and_folders_parse_with_names_sizes_and_times() -> None:
    text = rendered(file_status("a b,c %3A é.parquet", 42, 7), dir_status("sub"), file_status("x{y}", 0))
    assert parse_rendered_statuses(text, FOLDER, 3) == [
        ("a b,c %3A é.parquet", False, 42, 7),
        ("sub", True, 0, 0),
        ("x{y}", False, 0, 1795481969000),
    ]


def test_an_empty_folder_parses_empty() -> None:
    assert parse_rendered_statuses("{}", FOLDER, 0) == []


@pytest.mark.parametrize(
    "name",
    [
        "f; isDirectory=true",
        "f; isDirectory=false; length=1; replication=1; blocksize=1; modification_time=1",
    ],
)
def test_a_name_holding_the_separator_is_left_to_the_slow_path(name: str) -> None:
    assert parse_rendered_statuses(rendered(file_status(name)), FOLDER, 1) is None


def test_a_count_that_does_not_match_is_left_to_the_slow_path() -> None:
    assert parse_rendered_statuses(rendered(file_status("a"), file_status("b")), FOLDER, 3) is None


def test_statuses_of_another_folder_are_left_to_the_slow_path() -> None:
    assert parse_rendered_statuses(rendered(file_status("a")), "s3a://lake/other", 1) is None


@pytest.mark.spark
def test_both_paths_list_the_same(spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    storage = HadoopStorage(tmp_path.as_uri(), spark)
    for name in ["a b.parquet", "dt=10:00", "%41", "é", "f; isDirectory=true"]:
        storage.write(f"p/{name}/f" if name.startswith("dt") else f"p/{name}", b"xy")
    fast = storage.list("p")
    monkeypatch.setattr(hadoop, "parse_rendered_statuses", lambda *_: None)
    assert storage.list("p") == fast
    assert [(i.name, i.size, i.is_dir) for i in fast] == [
        ("%41", 2, False), ("a b.parquet", 2, False), ("dt=10:00", 0, True), ("f; isDirectory=true", 2, False), ("é", 2, False)
    ]  # fmt: skip
