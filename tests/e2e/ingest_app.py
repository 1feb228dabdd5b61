"""A user's ingestion job, as a Deployment's pod runs it: Apache Hudi's own Spark writer (the job image's
PySpark and Hudi bundle, local mode) upserting a batch into the table at a time, each committed batch
acknowledged by an object of its own under ``ACKS``. On SIGTERM it finishes the batch it is writing,
then stops, as a streaming job stops between micro-batches.

Run in the pod as ``python ingest_app.py``; its settings come from the environment:
- ``TABLE``: the table's URI; ``HUDI_OPTIONS``: Hudi's writer options (JSON);
- ``HADOOP_CONF``: the S3A settings (JSON; the credentials are the pod's AWS_* variables);
- ``ACKS``: where the acknowledgements go; ``POD_NAME``: this pod (keys and acknowledgements say it).

Each batch updates 8 of the table's keys (``O-0`` to ``O-59``, as tests/e2e/harness.py writes them) and
adds 2 new ones, ``amount`` telling the batch apart. This file is the pod's program only: the tests import nothing from it.
"""

from __future__ import annotations

import json
import os
import signal
import time
from typing import Any

from pyspark.sql import SparkSession

SCHEMA = "order_id string, day string, amount double"
DAYS = ("2025-11-10", "2025-11-11")
KEYS = 60


def main() -> None:
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    hadoop = json.loads(os.environ["HADOOP_CONF"])
    builder = (
        SparkSession.builder.master("local[1]")
        .appName("ingest")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
        .config("spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension")
    )
    for key, value in hadoop.items():
        builder = builder.config(f"spark.hadoop.{key}", value)
    spark = builder.getOrCreate()
    table, options, acks, pod = (
        os.environ["TABLE"], json.loads(os.environ["HUDI_OPTIONS"]), os.environ["ACKS"], os.environ["POD_NAME"]
    )  # fmt: skip
    batch = 0
    while not stopping:
        batch += 1
        rows = batch_rows(pod, batch)
        spark.createDataFrame(rows, SCHEMA).write.format("hudi").options(**options).option(
            "hoodie.datasource.write.operation", "upsert"
        ).mode("append").save(table)
        acknowledge(spark, f"{acks}/{pod}/{batch:05d}.json", {"at": time.time(), "rows": rows})
        print(f"batch {batch} committed: {len(rows)} rows", flush=True)
    spark.stop()


def batch_rows(pod: str, batch: int) -> list[tuple[str, str, float]]:
    amount = round(time.time(), 3)  # tells this batch's rows from every other's
    updated = [(batch * 7 + k) % KEYS for k in range(8)]
    rows = [(f"O-{i}", DAYS[1] if i % 3 else DAYS[0], amount) for i in updated]  # each key in its own day
    return rows + [(f"N-{pod}-{batch}-{k}", DAYS[k % 2], amount) for k in range(2)]


def acknowledge(spark: Any, uri: str, ack: dict[str, Any]) -> None:
    """One object for one committed batch, through the session's Hadoop FileSystem (S3A)."""
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    out = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).create(path, True)
    try:
        out.write(bytearray(json.dumps(ack).encode()))
    finally:
        out.close()


if __name__ == "__main__":
    main()
