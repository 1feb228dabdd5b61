"""Which jars a job's session adds to ``spark.jars``: only those its JVMs do not start with."""

from __future__ import annotations

from pathlib import Path

from hudi_bucket.contract.requests import HUDI_BUNDLE_ENV, JVM_JAR_ENV
from hudi_bucket.spark.session import job_jars


def jar(path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"PK")
    return str(path)


def test_jars_the_environment_names_are_added_when_they_exist(tmp_path: Path) -> None:
    bundle, ours = jar(tmp_path / "cache" / "hudi.jar"), jar(tmp_path / "build" / "ours.jar")
    environ = {HUDI_BUNDLE_ENV: bundle, JVM_JAR_ENV: ours, "SPARK_HOME": str(tmp_path / "spark")}

    assert job_jars(environ) == [bundle, ours]
    assert job_jars({HUDI_BUNDLE_ENV: str(tmp_path / "missing.jar")}) == []


def test_jars_already_in_spark_homes_jars_are_not_fetched_again(tmp_path: Path) -> None:
    """As in the job image: both in /opt/spark/jars, a link to PySpark's folder."""
    pyspark = tmp_path / "venv" / "pyspark"
    jar(pyspark / "jars" / "hudi.jar")
    ours = jar(pyspark / "jars" / "ours.jar")
    (tmp_path / "opt-spark").symlink_to(pyspark)
    in_image = str(tmp_path / "opt-spark" / "jars" / "hudi.jar")
    environ = {HUDI_BUNDLE_ENV: in_image, JVM_JAR_ENV: ours, "SPARK_HOME": str(tmp_path / "opt-spark")}

    assert job_jars(environ) == []
    assert job_jars({**environ, "SPARK_HOME": ""}) == [in_image, ours]
