"""Where the test material lives: the repo, and ../shared beside it (real Hudi tables, real CRDs).

A clone has no ../shared: the tests that need it (marked ``shared``, or using ``fixture_table``) are
skipped, each with ``SHARED_MISSING`` as its reason (see tests/conftest.py), and everything else runs.
"""

from __future__ import annotations

import os
import subprocess
import zipfile
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]  # tests/lib/paths.py
SHARED = Path(os.environ.get("HUDI_BUCKET_SHARED", REPO.parent / "shared"))
FIXTURE_TABLES = SHARED / "fixtures" / "hudi-tables"
K8S_FIXTURES = SHARED / "fixtures" / "k8s"
SPARK_APPLICATION_CRD = K8S_FIXTURES / "sparkoperator.k8s.io_sparkapplications.yaml"  # the Spark Operator's

ALL_TABLES = sorted(p.stem for p in FIXTURE_TABLES.glob("*.zip"))
SHARED_FOUND = bool(ALL_TABLES) and SPARK_APPLICATION_CRD.is_file()
SHARED_MISSING = (
    f"needs ../shared (real Hudi tables of earlier Hudi releases, the Spark Operator's SparkApplication "
    f"CRD), not found at {SHARED}: set HUDI_BUCKET_SHARED to its path"
)


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


def _from_dev(variable: str, command: str) -> str:
    """What ``./dev test`` passes in ``variable``; a bare pytest run asks ``./dev command`` for it."""
    given = os.environ.get(variable)
    if given:
        return given
    found = subprocess.run([REPO / "dev", command], capture_output=True, text=True, check=False)
    if found.returncode != 0:
        raise RuntimeError(f"./dev {command} failed: {found.stderr.strip()}")
    return found.stdout.strip()


@cache
def hudi_bundle() -> Path:
    """Apache Hudi's Spark bundle jar: ``./dev`` pins, fetches and caches it."""
    return Path(_from_dev("HBO_HUDI_BUNDLE", "hudi-bundle"))


@cache
def s3a_jars() -> list[Path]:
    """Hadoop's S3A connector and its AWS SDK, at the versions of PySpark's Hadoop (``./dev`` pins them)."""
    return [Path(jar) for jar in _from_dev("HBO_S3A_JARS", "s3a-jars").split(",")]


@cache
def jvm_jar() -> Path:
    """The jobs' own JVM classes (the direct-write commit protocol): ``./dev`` compiles and caches them."""
    return Path(_from_dev("HBO_JVM_JAR", "jvm-jar"))
