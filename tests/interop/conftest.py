"""Fixtures of the interop tests: Hudi-written tables, written once per run and copied per test."""

from __future__ import annotations

from typing import Any

import pytest

from hudi_tables import HudiBucketTables


@pytest.fixture(scope="session")
def hudi_tables(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> HudiBucketTables:
    return HudiBucketTables(spark, tmp_path_factory.mktemp("hudi-tables"))
