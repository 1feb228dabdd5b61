"""What a copy-on-write rescale costs against what users would run otherwise, each a fresh process as
users run them (interpreter and JVM start included, as in a job's pod):

a. ours: ``hudi-bucket-job apply`` (the Native engine; tests/bench/phased_job.py runs it with timers
   around its steps, which give the phase breakdown);
b. Apache Hudi's ``partition_bucket_index_manager`` procedure, called from a PySpark session set up as
   Hudi's guide sets one up;
c. a plain Spark job: the same partitions' live base files read, repartitioned by record key into as many
   files as the new layout has, written as Parquet (no Hudi metadata, no commit): the data movement alone.

With ``--metadata-table`` the table has a metadata table with column stats and the record index, which
ours and Hudi's procedure keep (the plain job writes none). Hudi's procedure is given the options that
keep them, as our Hudi engine gives them (``hudi_engine.index_options``): with its defaults it drops the
record index (a fourth contender, "Hudi's procedure, defaults", shows that cheaper and lesser result).
Every run but that one must leave the table's metadata partitions as they were. Each writes the table's
codec: GZIP, Apache Hudi 1.2.0's default, which its files have (ours takes it from them, Hudi's procedure
from its defaults, the plain job is told).

Run: .venv/bin/python tests/bench/bench_against_others.py [--rows 2000000,20000000] [--rounds 2]
[--before REV] [--to 16,12] (2 million rows: about 5 minutes on 2 idle cores; 20 million: about 40). ``--before``
adds ours as of git revision REV (its job and its ``phased_job.py``), for a before-and-after in one run.

Apache Hudi 1.2.0 writes the table: a 20-character key, a long, a double, a 30-character string and a
``day`` partition over 6 days, half the rows on 2025-11-11; its simple bucket index with 8 buckets, no
metadata table; its first rules are then recorded without a rewrite (every day keeps 8). Two changes,
each rewriting three days (2025-11-11, -12 and -13: 70% of the rows): doubling (8 -> 16, which ours
does without a shuffle) and 8 -> 12 (a shuffle for everyone). Every run starts from a fresh copy of the
table; after ours and Hudi's, Apache Hudi reads every row back (counted). Each contender gets the same
Spark: local[2], a 4 GB driver. Writing the table and reading it back run in processes of their own, so
that no session of the benchmark's is alive beside a timed run. Reported per contender: the best and the
median wall time of its rounds, and the median task CPU (Spark's event log).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/: lib/paths.py

import pyspark
from pyspark.sql import SparkSession
from pyspark.sql import functions as F  # noqa: N812

from fresh_process import Command, Timings, interleaved, run_once
from hudi_bucket.contract.requests import HUDI_BUNDLE_ENV, JVM_JAR_ENV
from hudi_bucket.core.metadata_indexes import MetadataIndexes
from hudi_bucket.spark.session import build_session
from hudi_bucket.writing.hudi_engine import index_options
from lib.paths import hudi_bundle, jvm_jar

SKEWED_DAY = "2025-11-11"
OTHER_DAYS = ("2025-11-08", "2025-11-09", "2025-11-10", "2025-11-12", "2025-11-13")
REWRITTEN = ("day=2025-11-11", "day=2025-11-12", "day=2025-11-13")
PATTERN = "day=2025-11-1[123]"
BUCKETS = 8
# Every day keeps its 8 buckets: a hashing_config and no rewrite.
FIRST_RULES = (
    "--expressions",
    f"{PATTERN},{BUCKETS}",
    "--default",
    str(BUCKETS),
    "--current-buckets",
    str(BUCKETS),
)
CHANGES = {"doubling (8 -> 16)": 16, "8 -> 12": 12}
HUDI = "Hudi's procedure"
HUDI_DEFAULTS = "Hudi's procedure, defaults"  # no options: drops the record index (not a like result)


def spark_submit(driver_memory: str) -> str:
    """Every contender's PYSPARK_SUBMIT_ARGS (and the table chores', with more memory)."""
    return f"--master local[2] --driver-memory {driver_memory} pyspark-shell"


OPTIONS = {
    "hoodie.table.name": "orders",
    "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
    "hoodie.datasource.write.recordkey.field": "key",
    "hoodie.datasource.write.partitionpath.field": "day",
    "hoodie.datasource.write.hive_style_partitioning": "true",
    "hoodie.metadata.enable": "false",
    "hoodie.index.type": "BUCKET",
    "hoodie.bucket.index.engine": "SIMPLE",
    "hoodie.bucket.index.num.buckets": str(BUCKETS),
}
# ``--metadata-table``: the table as Hudi 1.x writes it by default, with its metadata table, plus the
# column stats and record indexes (ours keeps them through Hudi's metadata writer, as Hudi's procedure does).
METADATA_TABLE = {
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.index.column.stats.enable": "true",
    "hoodie.metadata.global.record.level.index.enable": "true",
}
HUDI_PROCEDURE = """
import sys
from pyspark.sql import SparkSession
root, expressions, default, bundle, options = sys.argv[1:6]
spark = (
    SparkSession.builder.config("spark.jars", bundle)
    .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
    .config("spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension")
    .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.hudi.catalog.HoodieCatalog")
    .getOrCreate()
)
spark.sql(f"CREATE TABLE orders USING hudi LOCATION '{root}'")
[row] = spark.sql(
    f"CALL partition_bucket_index_manager(table => 'orders', overwrite => '{expressions}', "
    f"bucket_number => {default}, dry_run => false" + (f", options => '{options}')" if options else ")")
).collect()
assert row[0] == "SUCCESS", row
"""
PLAIN_SPARK = """
import sys
from pyspark.sql import SparkSession
root, out, files, partitions = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
spark = SparkSession.builder.getOrCreate()
rows = spark.read.option("basePath", root).parquet(*(f"{root}/{p}" for p in partitions))
rows.repartition(files, "_hoodie_partition_path", "_hoodie_record_key").write.parquet(out, compression="gzip")
"""


def write_table(spark: SparkSession, root: Path, rows: int, metadata_table: bool = False) -> None:
    id_ = F.col("id")
    other_days = F.array(*(F.lit(d) for d in OTHER_DAYS))
    records = spark.range(rows).select(
        F.format_string("K-%018d", id_).alias("key"),
        (id_ * 7919 % 1_000_003).alias("quantity"),
        (id_ % 100_000 / 100.0).alias("price"),
        F.substring(F.sha2(id_.cast("string"), 256), 1, 30).alias("note"),
        F.when(id_ % 2 == 0, F.lit(SKEWED_DAY))
        .otherwise(F.element_at(other_days, (F.floor(id_ / 2) % len(OTHER_DAYS) + 1).cast("int")))
        .alias("day"),
    )
    options = {**OPTIONS, **(METADATA_TABLE if metadata_table else {})}
    records.write.format("hudi").options(**options).option(
        "hoodie.datasource.write.operation", "bulk_insert"
    ).mode("overwrite").save(str(root))


def in_own_process(*args: str) -> list[str]:
    """This script, as a process of its own doing one of its table chores (``table_chore``)."""
    return [sys.executable, str(Path(__file__)), *args]


def table_chore(chore: str, root: str, rows: str, metadata_table: str = "") -> None:
    """``write ROOT ROWS [metadata-table]``: Apache Hudi writes the table; ``count ROOT ROWS``: it reads
    ROWS back."""
    spark = build_session(f"bench-against-others-{chore}")
    if chore == "write":
        write_table(spark, Path(root), int(rows), metadata_table == "metadata-table")
    else:
        counted = spark.read.format("hudi").load(root).count()
        assert counted == int(rows), f"{root}: {counted} rows read back, {rows} written"
    spark.stop()


def job(*args: str, tree: Path | None = None) -> list[str]:
    """``phased_job.py ARGS``: of this checkout, or of ``tree`` (a revision's files), importing its job."""
    if tree is None:
        return [sys.executable, str(Path(__file__).with_name("phased_job.py")), *args]
    phased = tree / "tests" / "bench" / "phased_job.py"
    classes = f"{JVM_JAR_ENV}={tree / 'jvm.jar'}"
    return ["env", f"PYTHONPATH={tree / 'spark_app'}", classes, sys.executable, str(phased), *args]


def checkout(revision: str, folder: Path) -> Path:
    """The job and the phase timer of git ``revision``, extracted into ``folder``, with its JVM classes
    compiled into ``folder/jvm.jar`` (a revision's job needs its own commit protocol)."""
    repository = Path(__file__).parents[2]
    archive = subprocess.run(
        ["git", "-C", str(repository), "archive", revision, "spark_app", "tests/bench/phased_job.py"],
        capture_output=True,
        check=True,
    ).stdout
    folder.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    spark_jars = Path(pyspark.__file__).parent / "jars"
    sources = [str(s) for s in sorted((folder / "spark_app" / "jvm").rglob("*.java"))]
    javac = ["javac", "-nowarn", "--release", "8", "-cp", f"{spark_jars}/*", "-d", str(folder / "classes")]
    subprocess.run([*javac, *sources], check=True)
    subprocess.run(["jar", "cf", str(folder / "jvm.jar"), "-C", str(folder / "classes"), "."], check=True)
    return folder


def contenders(
    new_buckets: int, indexes: tuple[str, ...], before: tuple[str, Path] | None = None
) -> dict[str, Command]:
    """Each contender's command for the change to ``new_buckets``, on a table whose metadata table has
    ``indexes`` (its partitions; none without one)."""
    expressions = f"{PATTERN},{new_buckets}"
    rules = ("--expressions", expressions, "--default", str(BUCKETS))
    files = str(new_buckets * len(REWRITTEN))
    bundle = str(hudi_bundle())
    keep = ", ".join(f"{k}={v}" for k, v in index_options(MetadataIndexes(indexes)).items())  # global

    def ours(table: Path, out: Path) -> list[str]:
        return job("apply", "--table", str(table), *rules, "--engine", "Native")

    def ours_before(table: Path, out: Path) -> list[str]:
        assert before is not None
        return job("apply", "--table", str(table), *rules, "--engine", "Native", tree=before[1])

    def hudi(table: Path, out: Path, options: str = keep) -> list[str]:
        return [sys.executable, "-c", HUDI_PROCEDURE, str(table), expressions, str(BUCKETS), bundle, options]

    def hudi_defaults(table: Path, out: Path) -> list[str]:
        return hudi(table, out, options="")

    def plain(table: Path, out: Path) -> list[str]:
        return [sys.executable, "-c", PLAIN_SPARK, str(table), str(out), files, *REWRITTEN]

    named: dict[str, Command] = {"ours": ours, HUDI: hudi, "plain Spark": plain}
    if keep:
        named[HUDI_DEFAULTS] = hudi_defaults
    return {**named, f"ours before ({before[0]})": ours_before} if before else named


def metadata_partitions(table: Path) -> tuple[str, ...]:
    """The metadata table's partitions ``hoodie.properties`` lists (its indexes)."""
    for line in (table / ".hoodie" / "hoodie.properties").read_text().splitlines():
        if line.startswith("hoodie.table.metadata.partitions="):
            return tuple(sorted(p for p in line.partition("=")[2].split(",") if p))
    return ()


def phases(stdout: str) -> dict[str, dict[str, float]]:
    line = next(line for line in reversed(stdout.splitlines()) if line.startswith("PHASES "))
    return json.loads(line.removeprefix("PHASES "))  # type: ignore[no-any-return]


def main() -> None:
    if sys.argv[1:2] in (["write"], ["count"]):
        return table_chore(*sys.argv[1:5])
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", default="2000000,20000000", help="table sizes, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", metavar="REV", help="also run ours as of this git revision")
    parser.add_argument("--to", default="16,12", help="the changes: new bucket counts, comma-separated")
    parser.add_argument(
        "--metadata-table",
        action="store_true",
        help="tables with a metadata table, column stats, record index",
    )
    parser.add_argument("--driver-memory", default="4g", help="every contender's Spark driver memory")
    parser.add_argument(
        "--write-memory",
        default="12g",
        help="the driver memory of Hudi's writes of the tables and its reads back, not timed (at 20M rows"
        " with a record index Hudi's bulk insert needs more than 4g)",
    )
    parser.add_argument(
        "--template",
        type=Path,
        help="where the written table is kept, and taken from by a later run with the same --rows and shape "
        "(one size only): at 20M rows with a record index Hudi's write of it takes over 10 minutes",
    )
    args = parser.parse_args()

    # Ours is given Hudi's bundle and our JVM classes as the job image gives them (the others ignore both).
    env = {
        **os.environ,
        HUDI_BUNDLE_ENV: str(hudi_bundle()),
        JVM_JAR_ENV: str(jvm_jar()),
        "PYSPARK_SUBMIT_ARGS": spark_submit(args.driver_memory),
    }
    chores = {**env, "PYSPARK_SUBMIT_ARGS": spark_submit(args.write_memory)}
    scratch = Path(tempfile.mkdtemp(prefix="hbo-bench-before-"))
    before = (args.before, checkout(args.before, scratch / "tree")) if args.before else None
    results = []
    for rows in (int(r) for r in args.rows.split(",")):
        work = Path(tempfile.mkdtemp(prefix="hbo-bench-others-"))
        template = args.template or work / "template"
        started = time.perf_counter()
        shape = ["metadata-table"] if args.metadata_table else []
        kept = template.exists()
        if not kept:
            run_once("writing the table", in_own_process("write", str(template), str(rows), *shape), chores)
            files = sorted(template.rglob("*.parquet"))
            run_once("first rules", job("apply", "--table", str(template), *FIRST_RULES), env)
            assert sorted(template.rglob("*.parquet")) == files, "the first rules rewrote files"
        made = (
            f"taken from {template}" if kept else f"written by Hudi in {time.perf_counter() - started:.0f} s"
        )
        print(f"{rows:,} rows {made}; load {os.getloadavg()[0]:.1f}")

        indexes = metadata_partitions(template)

        def check(name: str, table: Path, rows: int = rows, indexes: tuple[str, ...] = indexes) -> None:
            if name == "plain Spark":
                return
            run_once(f"reading back {name}'s table", in_own_process("count", str(table), str(rows)), chores)
            lost = sorted(set(indexes) - set(metadata_partitions(table)))
            if name == HUDI_DEFAULTS:
                print(f"  {name} left the metadata table without {', '.join(lost) or 'nothing'}")
            else:
                assert not lost, f"{name} dropped the metadata table's {', '.join(lost)}"

        for change, new_buckets in CHANGES.items():
            if str(new_buckets) not in args.to.split(","):
                continue
            commands = contenders(new_buckets, indexes, before)
            runs = interleaved(template, work, commands, args.rounds, env, check)
            phased = {
                name: phases(runs.outputs[name][runs.seconds[name].index(runs.best(name))])
                for name in commands
                if name.startswith("ours")
            }
            results.append((rows, change, runs, phased))
            print(f"  {change}: " + ", ".join(f"{n} {runs.best(n):.1f} s" for n in commands), flush=True)
        shutil.rmtree(work)
    shutil.rmtree(scratch)
    for title, figure in (
        ("best", Timings.best),
        ("median", Timings.median),
        ("median task CPU", Timings.median_cpu),
    ):
        table(title, results, figure)
    for rows, change, _, phased in results:
        for name, timed in phased.items():
            marks = ", ".join(f"{k} {v:.1f}" for k, v in timed["marks"].items())
            steps = ", ".join(f"{k.strip()} {v:.1f}" for k, v in timed["steps"].items())
            print(f"\n{name}, {rows:,} rows, {change} (s): {marks}\n  {steps}")


def table(
    title: str, results: list[tuple[int, str, Timings, Any]], figure: Callable[[Timings, str], float]
) -> None:
    """One markdown table of every size and change: each contender's ``figure`` (seconds), and ours over
    each other's."""
    names = list(results[0][2].seconds)
    ratios = [("ours / Hudi", HUDI), ("ours / plain", "plain Spark")]
    ratios += [(f"ours / {n}", n) for n in names if n.startswith("ours before")]
    print(f"\n{title}:\n| rows | change | " + " | ".join(names + [r for r, _ in ratios]) + " |")
    print("|---|---|" + "---|" * (len(names) + len(ratios)))
    for rows, change, runs, _ in results:
        seconds = {n: figure(runs, n) for n in names}
        cells = [f"{seconds[n]:.1f} s" for n in names] + [
            f"{seconds['ours'] / seconds[n]:.2f}" for _, n in ratios
        ]
        print(f"| {rows:,} | {change} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
