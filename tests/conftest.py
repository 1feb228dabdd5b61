"""Shared test fixtures: the real Hudi tables from ../shared and one local SparkSession per run."""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("HUDI_BUCKET_SHARED", REPO.parent / "shared"))
FIXTURE_TABLES = SHARED / "fixtures" / "hudi-tables"
K8S_FIXTURES = SHARED / "fixtures" / "k8s"

ALL_TABLES = sorted(p.stem for p in FIXTURE_TABLES.glob("*.zip"))


def unzip_table(name: str, dest: Path) -> Path:
    """Unzip fixture table ``name`` into ``dest`` and return the table root.

    The root is the folder holding ``.hoodie/hoodie.properties`` (not the metadata table's); the zips'
    ``__MACOSX/`` entries are skipped as a table reader must skip them.
    """
    with zipfile.ZipFile(FIXTURE_TABLES / f"{name}.zip") as archive:
        members = [m for m in archive.namelist() if not m.startswith("__MACOSX/")]
        archive.extractall(dest, members)
    roots = [
        p.parent.parent
        for p in dest.rglob("hoodie.properties")
        if p.parent.name == ".hoodie" and "metadata" not in p.parent.parent.parts[len(dest.parts) :]
    ]
    assert len(roots) == 1, f"{name}: expected one table root, found {roots}"
    return roots[0]


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

    from hudi_bucket.jobs.session import configure, use_this_python_for_workers

    use_this_python_for_workers()
    session = (
        SparkSession.builder.master("local[2]")
        .appName("hudi-bucket-operator-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "4")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield configure(session)
    session.stop()


@pytest.fixture(scope="session")
def jvm(spark: object) -> object:
    """The py4j gateway into Spark's JVM: the oracle for Java semantics (hashing, regex)."""
    return spark.sparkContext._jvm  # type: ignore[attr-defined]
