"""Fixtures of the object-store tests: tables uploaded to the run's S3 server (``s3``, tests/conftest.py)
under prefixes of their own."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from object_store.server import S3Server

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
