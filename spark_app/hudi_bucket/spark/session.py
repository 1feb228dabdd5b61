"""The one place a SparkSession is built, with the settings Hudi-compatible Parquet needs.

Only the job entry point (the CLI) calls ``build_session``; everything else receives the session.
Tests and callers that already have a session pass it through ``configure`` instead.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from hudi_bucket.contract.requests import HUDI_BUNDLE_ENV, JVM_JAR_ENV

# Parquet as Hudi's Spark writer lays it out, so Hudi readers and hudi-rs read our files unchanged.
HUDI_PARQUET_CONF = {
    # Hudi writes timestamps as INT64 micros (Avro timestamp-micros); Spark's default is INT96.
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    # One file per bucket: never let Spark split a bucket's output by record count.
    "spark.sql.files.maxRecordsPerFile": "0",
    # Instants and timestamps are compared across machines: keep Spark's clock in UTC.
    "spark.sql.session.timeZone": "UTC",
}


# Spark replaces ``${env:NAME}``, ``${system:NAME}`` and ``${a.setting}`` in SQL text with their values
# before parsing it (``spark.sql.variable.substitute``, on by default). The SQL our jobs build holds text a
# table's author wrote (its URI, rule patterns): it must reach Spark as written, never with the job's
# environment or settings (its credentials) in place of a ``${...}``.
NO_VARIABLE_SUBSTITUTION = {"spark.sql.variable.substitute": "false"}

# _SUCCESS markers are noise in the staging folders we list.
HADOOP_CONF = {"mapreduce.fileoutputcommitter.marksuccessfuljobs": "false"}

# Java's String.hashCode as a SQL function (``bucketing.bucket_ids``), where our JVM classes are loaded.
STRING_HASH_FUNCTION = "hudi_bucket_string_hash"
STRING_HASH_CLASS = "io.hudibucket.spark.JavaStringHash"


def configure(spark: Any) -> Any:
    """Apply the settings our jobs rely on to an existing session."""
    for key, value in {**HUDI_PARQUET_CONF, **NO_VARIABLE_SUBSTITUTION}.items():
        spark.conf.set(key, value)
    hadoop_conf = spark.sparkContext._jsc.hadoopConfiguration()
    for key, value in HADOOP_CONF.items():
        hadoop_conf.set(key, value)
    if on_classpath(spark, STRING_HASH_CLASS):
        from pyspark.sql.types import IntegerType

        spark.udf.registerJavaFunction(STRING_HASH_FUNCTION, STRING_HASH_CLASS, IntegerType())
    return spark


@contextmanager
def scoped_conf(spark: Any, settings: Mapping[str, str]) -> Iterator[None]:
    """Session settings for the Spark actions run inside the block only (plans are made per action)."""
    previous = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def run_sql(spark: Any, statement: str) -> list[Any]:
    """The rows of one SQL statement the job built from text, run as written: without variable
    substitution for this statement, whatever the session's settings (a job's sparkConf) say."""
    with scoped_conf(spark, NO_VARIABLE_SUBSTITUTION):
        return list(spark.sql(statement).collect())


def use_this_python_for_workers() -> None:
    """Python workers must import hudi_bucket: unless told otherwise (a job image sets PYSPARK_PYTHON),
    start them with this interpreter rather than whatever ``python3`` is first on PATH."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


# Apache Hudi's SQL in the session, for the Hudi engine (writing.hudi_engine) and for reading log files
# (reading.log_records): the settings Hudi's Spark guide requires, given when ``HUDI_BUNDLE_ENV`` names Hudi's
# Spark bundle. Without it the Native engine runs, the Hudi engine says why not, and verify counts the
# log files it could not read.
HUDI_SQL_CONF = {
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
    "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
}


def hudi_conf(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The session settings that turn Hudi's SQL on, if the environment names a bundle that exists."""
    return dict(HUDI_SQL_CONF) if os.path.isfile(environ.get(HUDI_BUNDLE_ENV, "")) else {}


def job_jars(environ: Mapping[str, str] = os.environ) -> list[str]:
    """The jars a job's session loads (``spark.jars``): those of Hudi's bundle (``HUDI_BUNDLE_ENV``) and
    of our own JVM classes (``JVM_JAR_ENV``) that the environment names and that exist, unless they are in
    ``$SPARK_HOME/jars`` (as the job image has them): every JVM of the job has those on its classpath
    already, and ``spark.jars`` would make each executor fetch them from the driver again (Hudi's bundle
    is 80 MB)."""
    named = (environ.get(HUDI_BUNDLE_ENV, ""), environ.get(JVM_JAR_ENV, ""))
    spark_jars = (
        os.path.realpath(os.path.join(environ["SPARK_HOME"], "jars")) if environ.get("SPARK_HOME") else None
    )
    return [
        jar for jar in named if os.path.isfile(jar) and os.path.dirname(os.path.realpath(jar)) != spark_jars
    ]


def on_classpath(spark: Any, class_name: str) -> bool:
    """Whether the session's JVM has ``class_name`` (through py4j's view, which sees spark.jars too)."""
    from py4j.java_gateway import JavaClass

    return isinstance(java_class(spark, class_name), JavaClass)  # py4j names an unknown class a package


def java_class(spark: Any, class_name: str) -> Any:
    """The class named ``class_name`` in the session's JVM, for its static members."""
    found: Any = spark.sparkContext._jvm
    for part in class_name.split("."):
        found = getattr(found, part)
    return found


def build_session(app_name: str, master: str | None = None) -> Any:
    """A SparkSession for one job run: local[*] when no master is given and none is configured."""
    from pyspark.sql import SparkSession

    use_this_python_for_workers()
    builder = SparkSession.builder.appName(app_name)
    if master:
        builder = builder.master(master)
    jars = ",".join(job_jars())
    settings = {
        **HUDI_PARQUET_CONF,
        **NO_VARIABLE_SUBSTITUTION,
        **hudi_conf(),
        **({"spark.jars": jars} if jars else {}),
    }
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    return configure(session)
