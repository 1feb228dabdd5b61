"""How each rewrite path of ``apply`` would spread over a cluster, projected from Spark's event log.

Run: .venv/bin/python tests/bench/bench_cluster_projection.py [--rows N] [--paths split,merge,...]
     [--master local[2]] [--out FILE]
(1,000,000 rows: about 6 minutes on 2 idle cores.)

On one machine two cores run four tasks or four hundred alike; what a cluster would do depends on how the
work is split. Each path rescales one hot partition (the one users rescale) in a fresh process with
Spark's event log on, and event_log.py reads it back: the tasks that wrote bucket files, the largest
one's rows against one new bucket's share (the target is at most 2), the task time, and the wall time
projected for 8, 64 and 512 executors (each stage the larger of its longest task and its task time spread
over the executors; the target at 64 is within 20% of an even spread). The paths:

- split: a copy-on-write partition of 4 buckets to 32 (each new bucket from one old file), and the same
  with ``--full-shuffle``;
- double: 16 buckets to 32 (each old file to two new buckets);
- merge: 32 buckets to 8 (each new bucket from four old files);
- shuffle: 8 buckets to 20 (neither divides the other);
- mor: a MERGE_ON_READ partition Apache Hudi wrote, 4 buckets to 32, a fifth of its keys updated into log
  files (read by Hudi's own file group reader);
- bootstrap: a Parquet dataset Apache Hudi bootstrapped (METADATA_ONLY skeletons), converted to 32 buckets.

After each rewrite Apache Hudi reads the partition back: every record there before is there once.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/: lib/, the helpers that write Hudi tables

from event_log import Projection, Run, table
from pyspark.sql import SparkSession
from pyspark.sql import functions as F  # noqa: N812

from fresh_process import run_once, with_event_log
from hudi_bucket.commands.write import write
from hudi_bucket.contract.requests import HUDI_BUNDLE_ENV, JVM_JAR_ENV, WriteOptions
from hudi_bucket.spark.session import build_session, scoped_conf
from lib.paths import hudi_bundle, jvm_jar

DAY = "2025-11-11"
HUDI = {
    "hoodie.table.name": "orders",
    "hoodie.datasource.write.recordkey.field": "key",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.partitionpath.field": "day",
    "hoodie.datasource.write.hive_style_partitioning": "true",
    "hoodie.metadata.enable": "false",
}


def rows_of(spark: SparkSession, count: int, ts: int = 1, start: int = 0, step: int = 1) -> Any:
    """``count`` orders of the hot day: a random-looking key, a long, a 30-character note."""
    id_ = F.col("id")
    return spark.range(start, count, step).select(
        F.concat(F.lit("K-"), F.substring(F.sha2(id_.cast("string"), 256), 1, 16)).alias("key"),
        F.lit(ts).cast("long").alias("ts"),
        (id_ * 7919 % 1_000_003).alias("quantity"),
        F.substring(F.sha2(F.concat(id_.cast("string"), F.lit(ts)), 256), 1, 30).alias("note"),
        F.lit(DAY).alias("day"),
    )


def ours(buckets: int) -> Callable[[SparkSession, Path, int], None]:
    """A copy-on-write table of the hot day with ``buckets`` buckets, written by our ``write``."""

    def make(spark: SparkSession, root: Path, count: int) -> None:
        options = WriteOptions(
            source="", operation="insert", record_key=("key",), partition_fields=("day",), create=True,
            table_version=9, hive_style=True, default_buckets=buckets,
        )  # fmt: skip
        write(spark, str(root), options, rows=rows_of(spark, count))

    return make


def merge_on_read(spark: SparkSession, root: Path, count: int) -> None:
    """Apache Hudi writes it with its simple bucket index of 4, then upserts a fifth of the keys."""
    options = {
        **HUDI,
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.compact.inline": "false",
        "hoodie.index.type": "BUCKET",
        "hoodie.bucket.index.engine": "SIMPLE",
        "hoodie.bucket.index.num.buckets": "4",
    }
    for frame, operation in (
        (rows_of(spark, count), "bulk_insert"),
        (rows_of(spark, count, 2, 0, 5), "upsert"),
    ):
        frame.write.format("hudi").options(**options).option(
            "hoodie.datasource.write.operation", operation
        ).mode("append").save(str(root))


def bootstrapped(spark: SparkSession, root: Path, count: int) -> None:
    """A plain Parquet dataset (8 files), bootstrapped by Apache Hudi as METADATA_ONLY skeletons."""
    source = root.parent / f"{root.name}-source"
    rows_of(spark, count).repartition(8).write.partitionBy("day").parquet(str(source))
    options = {
        **HUDI,
        "hoodie.bootstrap.base.path": str(source),
        "hoodie.bootstrap.mode.selector": "org.apache.hudi.client.bootstrap.selector.MetadataOnlyBootstrapModeSelector",
        "hoodie.datasource.write.operation": "bootstrap",
    }
    inference = "spark.sql.sources.partitionColumnTypeInference.enabled"
    with scoped_conf(spark, {inference: spark.conf.get(inference, "true")}):
        spark.createDataFrame([], "struct<>").write.format("hudi").options(**options).mode("overwrite").save(
            str(root)
        )


@dataclass(frozen=True)
class Rewrite:
    """A table to make, and the rescale of its hot partition: ``new_buckets`` by ``arguments``."""

    make: Callable[[SparkSession, Path, int], None]
    arguments: tuple[str, ...]
    new_buckets: int


def to(new: int, default: int, *more: str) -> tuple[str, ...]:
    return ("--expressions", f"11-11,{new}", "--default", str(default), *more)


PATHS = {
    "split": Rewrite(ours(4), to(32, 4), 32),
    "split, full shuffle": Rewrite(ours(4), to(32, 4, "--full-shuffle"), 32),
    "double": Rewrite(ours(16), to(32, 16), 32),
    "merge": Rewrite(ours(32), to(8, 32), 8),
    "shuffle": Rewrite(ours(8), to(20, 8), 20),
    "mor": Rewrite(merge_on_read, to(32, 4, "--current-buckets", "4"), 32),
    "mor, full shuffle": Rewrite(merge_on_read, to(32, 4, "--current-buckets", "4", "--full-shuffle"), 32),
    "bootstrap": Rewrite(bootstrapped, to(32, 32, "--convert"), 32),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--paths", default=";".join(PATHS), help="';'-separated")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--out", type=Path, help="also write the table here")
    parser.add_argument("--stages", action="store_true", help="print each run's stages too")
    args = parser.parse_args()

    env = {**os.environ, HUDI_BUNDLE_ENV: str(hudi_bundle()), JVM_JAR_ENV: str(jvm_jar())}
    os.environ.update(env)  # the session that writes the tables loads Hudi's bundle too
    work = Path(tempfile.mkdtemp(prefix="hbo-bench-projection-"))
    spark = build_session("bench-cluster-projection", "local[2]")
    results = []
    for name in args.paths.split(";"):
        path = PATHS[name]
        root = work / name.replace(" ", "-").replace(",", "") / "table"
        path.make(spark, root, args.rows)
        before = spark.read.format("hudi").load(str(root)).where(F.col("day") == DAY)
        held, keys = before.count(), before.select("key").distinct().count()
        command = [
            sys.executable,
            "-m",
            "hudi_bucket",
            "apply",
            "--table",
            str(root),
            "--master",
            args.master,
        ]
        events = root.parent / "events"
        seconds, _ = run_once(name, [*command, *path.arguments], with_event_log(env, events))
        after = spark.read.format("hudi").load(str(root)).where(F.col("day") == DAY)
        assert (after.count(), after.select("key").distinct().count()) == (held, keys), name
        run = Run.read(events)
        projection = Projection.of(run, held, path.new_buckets)
        if args.stages:
            for stage in run.stages:
                rows = [t.rows for t in stage.tasks]
                print(f"  stage {stage.stage_id} {stage.name[:50]!r}: {len(stage.tasks)} tasks, longest "
                      f"{stage.longest:.1f} s of {stage.seconds:.1f} s, rows {min(rows):,}..{max(rows):,}")  # fmt: skip
        results.append((name, projection))
        print(f"{name}: {held:,} records, {seconds:.1f} s; load {os.getloadavg()[0]:.1f}", flush=True)
        shutil.rmtree(root.parent)
    spark.stop()
    shutil.rmtree(work)
    printed = table(results)
    print(printed)
    if args.out:
        args.out.write_text(printed + "\n")


if __name__ == "__main__":
    main()
