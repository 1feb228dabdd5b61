"""Shared test fixtures: the real Hudi tables from ../shared and one local SparkSession per run."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from paths import hudi_bundle, unzip_table

# Operator tests resync fast (read when the handlers module is imported).
os.environ.setdefault("HBO_RESYNC_SECONDS", "0.3")
os.environ.setdefault("HBO_METRICS_PORT", "0")


@pytest.fixture
def fixture_table(tmp_path: Path) -> Callable[[str], Path]:
    """Returns a function that unzips a fixture table into this test's temp folder."""
    counter = iter(range(1000))

    def make(name: str) -> Path:
        return unzip_table(name, tmp_path / f"{name}-{next(counter)}")

    return make


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """One local SparkSession for the whole run (starting a JVM is the slowest thing we do)."""
    from pyspark.sql import SparkSession

    from hudi_bucket.jobs.session import HUDI_BUNDLE_ENV, configure, hudi_conf, use_this_python_for_workers

    use_this_python_for_workers()
    session = (
        SparkSession.builder.master("local[2]")
        .appName("hudi-bucket-operator-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "4")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.session.timeZone", "UTC")
        # Apache Hudi in the same session, as a job's session has it (see jobs.session): the interop
        # tests' writer and reader, and the Hudi engine. Hudi's SQL rules act only on Hudi relations.
        .config(map=hudi_conf({HUDI_BUNDLE_ENV: str(hudi_bundle())}))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield configure(session)
    session.stop()


@pytest.fixture(scope="session")
def jvm(spark: object) -> object:
    """The py4j gateway into Spark's JVM: the oracle for Java semantics (hashing, regex)."""
    return spark.sparkContext._jvm  # type: ignore[attr-defined]
