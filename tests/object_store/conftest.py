"""Fixtures of the object-store tests: tables uploaded to the run's S3 server (``s3``, tests/conftest.py)
under prefixes of their own."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from object_store.s3_tables import upload
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
    return lambda root, prefix: upload(s3, root, s3.bucket, prefix)
