"""What a MERGE_ON_READ rescale costs: the Native engine against Hudi's own procedure (engine Hudi) and a
plain Spark rewrite of the same partitions, each a fresh process as users run them.

Run: .venv/bin/python tests/bench/bench_merge_on_read.py [--rows N] [--rounds R]
(1,000,000 rows and 3 rounds: about 10 minutes on 2 idle cores.)

Apache Hudi 1.2.0 writes a MERGE_ON_READ table with its simple bucket index, 4 buckets a day over 4
days, then upserts a fifth of the keys (log files of updates) and deletes a fiftieth (delete blocks).
Each measured run starts from a fresh copy of that table and runs in a new process (its JVM start
included, as in a job's pod): the three commands interleave round by round, and each figure is the
median and the best of its rounds.

a. ``hudi-bucket-job apply --engine Native``: two of the four days go 4 -> 8 buckets, read by Hudi's file
   group reader one partition a task, written without a shuffle;
b. ``hudi-bucket-job apply --engine Hudi``: the same rules by Hudi's ``partition_bucket_index_manager``;
c. a plain Spark job: Hudi's snapshot read of the same two days, repartitioned into their 16 new files
   by record key, written as Parquet (no Hudi metadata, no commit): the data movement alone.

After each apply, Hudi reads every record the table held before (counted).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/: lib/, the helpers that write Hudi tables

from pyspark.sql import SparkSession
from pyspark.sql import functions as F  # noqa: N812

from fresh_process import run_once
from hudi_bucket.contract.requests import HUDI_BUNDLE_ENV
from hudi_bucket.spark.session import build_session
from lib.paths import hudi_bundle, jvm_jar

DAYS = ("2025-11-01", "2025-11-02", "2025-11-03", "2025-11-04")
RULES = ("--expressions", "2025-11-0[12],8", "--default", "4", "--current-buckets", "4")
OPTIONS = {
    "hoodie.table.name": "orders_mor",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.datasource.write.recordkey.field": "key",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.partitionpath.field": "day",
    "hoodie.datasource.write.hive_style_partitioning": "true",
    "hoodie.metadata.enable": "false",
    "hoodie.compact.inline": "false",
    "hoodie.index.type": "BUCKET",
    "hoodie.bucket.index.engine": "SIMPLE",
    "hoodie.bucket.index.num.buckets": "4",
}
PLAIN_SPARK = """
import sys
from pyspark.sql import SparkSession
root, out, bundle = sys.argv[1], sys.argv[2], sys.argv[3]
spark = (
    SparkSession.builder.config("spark.jars", bundle)  # Hudi's reader, set up as Hudi's guide says
    .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
    .config("spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension")
    .getOrCreate()
)
days = [spark.read.format("hudi").load(f"{root}/day={d}") for d in ("2025-11-01", "2025-11-02")]
rows = days[0].union(days[1])
rows.repartition(16, "_hoodie_partition_path", "_hoodie_record_key").write.parquet(out)
"""


def write_table(spark: SparkSession, root: Path, rows: int) -> int:
    """Hudi writes the table; returns how many records it holds."""

    def records(ids: object, ts: int) -> object:
        id_ = F.col("id")
        return ids.select(  # type: ignore[attr-defined]
            F.concat(F.lit("K-"), id_.cast("string")).alias("key"),
            F.lit(ts).cast("long").alias("ts"),
            (id_ % 100_000 / 100.0 + ts).alias("price"),
            F.substring(F.sha2(id_.cast("string"), 256), 1, 30).alias("note"),
            F.element_at(F.array(*(F.lit(d) for d in DAYS)), (id_ % len(DAYS) + 1).cast("int")).alias("day"),
        )

    def save(frame: object, operation: str) -> None:
        frame.write.format("hudi").options(**OPTIONS).option(  # type: ignore[attr-defined]
            "hoodie.datasource.write.operation", operation
        ).mode("append").save(str(root))

    save(records(spark.range(rows), 1), "bulk_insert")
    save(records(spark.range(0, rows, 5), 2), "upsert")
    save(records(spark.range(1, rows, 50), 3), "delete")
    return spark.read.format("hudi").load(str(root)).count()


def commands(table: Path, out: Path) -> dict[str, list[str]]:
    job = [sys.executable, "-m", "hudi_bucket", "apply", "--table", str(table), *RULES]
    return {
        "Native engine": [*job, "--engine", "Native"],
        "Hudi engine": [*job, "--engine", "Hudi"],
        "plain Spark": [sys.executable, "-c", PLAIN_SPARK, str(table), str(out), str(hudi_bundle())],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    env = {**os.environ, HUDI_BUNDLE_ENV: str(hudi_bundle()), "HBO_JVM_JAR": str(jvm_jar())}
    os.environ.update(env)  # the session that writes the table loads Hudi's bundle too
    work = Path(tempfile.mkdtemp(prefix="hbo-bench-mor-"))
    template = work / "template"
    spark = build_session("bench-merge-on-read", "local[2]")
    held = write_table(spark, template, args.rows)
    logs = sum(1 for p in template.rglob(".*.log.*") if not p.name.endswith(".crc"))
    print(f"table: {held} records in {len(DAYS)} days, {logs} log files; load {os.getloadavg()[0]:.1f}")

    seconds: dict[str, list[float]] = {name: [] for name in commands(work, work)}
    for round_ in range(args.rounds):
        for name, runs in seconds.items():
            table, out = work / f"run-{round_}" / "table", work / f"run-{round_}" / "out"
            shutil.rmtree(table.parent, ignore_errors=True)
            shutil.copytree(template, table)
            runs.append(run_once(name, commands(table, out)[name], env)[0])
            if name != "plain Spark":
                assert spark.read.format("hudi").load(str(table)).count() == held, name
            shutil.rmtree(table.parent)
        print(f"round {round_ + 1}: " + ", ".join(f"{n} {s[-1]:.1f} s" for n, s in seconds.items()))
    spark.stop()
    shutil.rmtree(work)

    native = statistics.median(seconds["Native engine"])
    for name, runs in seconds.items():
        median = statistics.median(runs)
        print(f"{name:14} median {median:6.1f} s  best {min(runs):6.1f} s  Native/this {native / median:.2f}")


if __name__ == "__main__":
    main()
