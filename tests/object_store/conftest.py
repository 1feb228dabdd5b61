"""Fixtures of the object-store tests: tables uploaded to the run's S3 server (``s3``, tests/conftest.py)
under prefixes of their own."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from object_store.server import S3Server

from paths import unzip_table

S3_DIR = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if S3_DIR in item.path.parents:
            item.add_marker(pytest.mark.spark)


UploadTable = Callable[[Path, str], str]


@pytest.fixture
def upload_table(s3: S3Server) -> UploadTable:
    """Copies a local table folder to ``prefix`` in the bucket; returns its ``s3a://`` URI."""
    from pyarrow import fs

    def upload(root: Path, prefix: str) -> str:
        fs.copy_files(str(root), f"{s3.bucket}/{prefix}", destination_filesystem=s3.filesystem())
        return s3.uri(prefix)

    return upload


@pytest.fixture
def s3_fixture_table(s3_prefix: str, upload_table: UploadTable, tmp_path: Path) -> Callable[[str], str]:
    """A fixture table from ../shared, uploaded: returns its ``s3a://`` URI."""

    def make(name: str) -> str:
        local = unzip_table(name, tmp_path / name)
        uri = upload_table(local, s3_prefix)
        shutil.rmtree(tmp_path / name)
        return uri

    return make
