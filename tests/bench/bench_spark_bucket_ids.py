"""What bucketing costs inside Spark: our two bucket-id columns against Spark's built-in ``hash()``.

Run: .venv/bin/python tests/bench/bench_spark_bucket_ids.py   (under a minute on 2 cores)

Over ~3M cached single-value string keys, each variant is projected, then forced with a ``sum`` (no
rows are collected; ``reflect`` is non-deterministic, so it may not sit inside the aggregate itself):
- ``bucket_id_column``, general path: keys cross into Python workers as Arrow batches
  (``bucket_batch``); it handles every key style;
- ``bucket_id_column(every_key_whole=True)``: Java's own string hash, without leaving the JVM (our JVM
  function where ``HBO_JVM_JAR`` names our classes, else ``reflect``); what ``apply`` uses for keys taken
  whole;
- Spark's built-in ``hash()`` (Murmur3, not Hudi's hash): the floor for any per-row expression.
The two bucket columns are checked to agree first.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from pyspark.sql import functions as F  # noqa: N812

from hudi_bucket.bucketing.bucket_ids import bucket_id_column
from hudi_bucket.core.recordkeys import KeyStyle
from hudi_bucket.spark.session import build_session

KEYS = 3_000_000
NUM_BUCKETS = 64
CHECKED_KEYS = 200_000
WARM_UP_ROUNDS = 2
TIMED_ROUNDS = 3


def best_seconds(runs: Mapping[str, Callable[[], Any]]) -> dict[str, float]:
    """Each run's best time over TIMED_ROUNDS rounds, after WARM_UP_ROUNDS untimed ones (JIT compilation,
    Python worker start-up and imports). Rounds interleave the runs, so none is favoured by going last."""
    timings: dict[str, list[float]] = {label: [] for label in runs}
    for round_number in range(WARM_UP_ROUNDS + TIMED_ROUNDS):
        for label, run in runs.items():
            start = time.perf_counter()
            run()
            if round_number >= WARM_UP_ROUNDS:
                timings[label].append(time.perf_counter() - start)
    return {label: min(values) for label, values in timings.items()}


def main() -> None:
    spark = build_session("bench-spark-bucket-ids", master="local[*]")
    spark.sparkContext.setLogLevel("ERROR")
    keys = (
        spark.range(KEYS)
        .select(
            F.concat(F.lit("TXN-"), F.substring(F.sha2(F.col("id").cast("string"), 256), 1, 16)).alias("key")
        )
        .cache()
    )
    keys.count()

    arrow = bucket_id_column("key", NUM_BUCKETS, [], KeyStyle.HUDI_1X)
    jvm = bucket_id_column("key", NUM_BUCKETS, [], KeyStyle.HUDI_1X, every_key_whole=True)
    sample = keys.limit(CHECKED_KEYS)
    disagreeing = sample.where(arrow != jvm).count()
    assert disagreeing == 0, f"{disagreeing} keys bucketed differently by the two paths"

    variants = {
        "bucket_id_column (Arrow UDF)": arrow,
        "bucket_id_column (JVM, keys whole)": jvm,
        "built-in hash()": F.hash("key"),
    }
    seconds = best_seconds(
        {
            label: lambda column=column: keys.select(column.alias("v")).agg(F.sum("v")).collect()
            for label, column in variants.items()
        }
    )
    print(
        f"{KEYS:,} keys, {NUM_BUCKETS} buckets, Spark {spark.version}, {spark.sparkContext.defaultParallelism} cores, best of {TIMED_ROUNDS}"
    )
    base = seconds["built-in hash()"]
    for label, value in seconds.items():
        print(f"{label:<34} {value:6.2f} s  {KEYS / value:>12,.0f} keys/s  {value / base:5.2f}x hash() time")
    ratio = seconds["bucket_id_column (Arrow UDF)"] / seconds["bucket_id_column (JVM, keys whole)"]
    print(f"Arrow UDF / JVM time: {ratio:.2f}x")
    spark.stop()


if __name__ == "__main__":
    main()
