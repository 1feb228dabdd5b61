"""What a rescale costs: `apply`'s shuffle-free path against its full shuffle, and a shuffling `apply`
against a plain Spark job that moves the same bytes into the same number of files.

Run: .venv/bin/python tests/bench/bench_rescale.py [--rows N] [--rounds R] [--master M] [--keep]
(3,000,000 rows and 2 rounds: about 4 minutes on 2 idle cores, more when other jobs load them. Run times
carry the load average: compare ratios from quiet runs.)

One SparkSession, local[2] unless ``--master`` says otherwise: ``local-cluster[2,1,3072]`` starts two
executor processes of one core each, so shuffle blocks cross a socket as they do between cluster nodes,
where local[2] hands them over inside one JVM. Spark generates the dataset (a string record key, a long, a double, a
30-char string, a date and a ``day`` partition column over 6 days, 2025-11-11 holding half the rows),
and ``write`` creates a bucket-indexed COW table from it: 8 buckets a day, 16 for 2025-11-11. Every
measured run starts from a fresh copy of that table (``shutil.copytree``, not timed), and the runs
interleave, round by round, so none is favoured by going last; each figure is the best of its rounds:

a. ``apply`` doubling every partition's buckets (8 -> 16, 16 -> 32: each new bucket reads one old file,
   no shuffle) against the same ``apply`` with ``full_shuffle=True``;
b. ``apply`` of a non-multiple change (8 -> 12, 16 -> 24: apply itself picks the shuffle) against a plain
   ``read -> repartition(84 files, by record key) -> write parquet`` of the same live base files;
c. Spark alone, doing the doubling's data movement without any of apply's bookkeeping: the live files
   read with a bucket column and written partitioned by (partition, bucket), one task per old file, against
   the same with a hash repartition by (partition, bucket) before the write. Its ratio is what skipping the
   shuffle can gain at most on this machine: the ceiling for a.

After every ``apply`` the live base files are counted with Spark and must hold every input row. Each
``apply`` is also broken into phases (wrappers around the job's own functions, timing only), so a ratio
off target says where its time went.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyspark
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812

from hudi_bucket.bucketing.bucket_ids import bucket_id_column, num_buckets_column
from hudi_bucket.commands import apply as apply_module
from hudi_bucket.commands.apply import ApplyResult, apply
from hudi_bucket.commands.write import write
from hudi_bucket.contract.requests import ApplyOptions, WriteOptions
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.hudi.fs_view import load_file_groups
from hudi_bucket.spark.context import TableContext
from hudi_bucket.spark.session import build_session, scoped_conf
from hudi_bucket.writing import direct_write
from hudi_bucket.writing import rescale as rescale_module
from hudi_bucket.writing.bucket_files import RECORD_KEY
from hudi_bucket.writing.rescale import ONE_TASK_PER_READ, read_in_groups

DEFAULT_ROWS = 3_000_000
WARM_UP_ROWS = 20_000
SHUFFLE_PARTITIONS = 8  # 4 tasks a core on local[2]
DRIVER_MEMORY = "4g"  # the driver is the executor in local mode; the job spec's default executor size

SKEWED_DAY = "2025-11-11"
OTHER_DAYS = ("2025-11-08", "2025-11-09", "2025-11-10", "2025-11-12", "2025-11-13")
PATTERN = "11-11"
# (default buckets, buckets of the skewed day) for each layout the bench uses
INITIAL = (8, 16)
DOUBLED = (16, 32)  # every count a multiple of the initial one: the shuffle-free path
NON_MULTIPLE = (12, 24)  # 12 is neither a multiple nor a divisor of 8: apply shuffles

TARGET_SPEEDUP = 1.5  # full shuffle / shuffle-free, at least
TARGET_OVERHEAD = 1.3  # apply / plain Spark, at most


def rules(layout: tuple[int, int]) -> BucketRules:
    default, skewed = layout
    return BucketRules.parse(f"{PATTERN},{skewed}", default)


def files_in(layout: tuple[int, int]) -> int:
    default, skewed = layout
    return default * len(OTHER_DAYS) + skewed


def dataset(spark: SparkSession, rows: int) -> DataFrame:
    """``rows`` records built by Spark expressions: every even id on the skewed day, the odd ids spread
    round-robin over the other five."""
    other_days = F.array(*(F.lit(d) for d in OTHER_DAYS))
    id_ = F.col("id")
    return spark.range(rows).select(
        F.concat(F.lit("K-"), id_.cast("string")).alias("key"),
        (id_ * 7919 % 1_000_003).alias("quantity"),
        (id_ % 100_000 / 100.0).alias("price"),
        F.substring(F.sha2(id_.cast("string"), 256), 1, 30).alias("note"),
        F.date_add(F.lit("2024-01-01").cast("date"), (id_ % 700).cast("int")).alias("event_date"),
        F.when(id_ % 2 == 0, F.lit(SKEWED_DAY))
        .otherwise(F.element_at(other_days, (F.floor(id_ / 2) % len(OTHER_DAYS) + 1).cast("int")))
        .alias("day"),
    )


def create_table(spark: SparkSession, root: Path, rows: int) -> None:
    default, skewed = INITIAL
    request = WriteOptions(
        source="",
        operation="insert",  # the keys are unique: no dedup shuffle
        record_key=("key",),
        partition_fields=("day",),
        create=True,
        table_version=9,
        hive_style=True,
        expressions=f"{PATTERN},{skewed}",
        default_buckets=default,
    )
    write(spark, str(root), request, rows=dataset(spark, rows))


def live_base_files(spark: SparkSession, root: Path) -> list[str]:
    ctx = TableContext.open(spark, str(root))
    return [
        f"{root}/{g.latest_base_file.path}"
        for groups in load_file_groups(ctx.storage, ctx.table).values()
        for g in groups
        if g.latest_base_file
    ]


def count_live_rows(spark: SparkSession, root: Path) -> int:
    return spark.read.parquet(*live_base_files(spark, root)).count()


# --- phases: wrappers that time the job's own steps (they change nothing the job does) --------------


@dataclass
class Phases:
    """Seconds spent in each wrapped step during one ``apply``; nested steps count in their parent too."""

    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    spark_jobs: int = 0
    compiled_classes: int = 0  # whole-stage codegen classes Janino compiled (each also warms the JIT anew)


class PhaseClock:
    """Wraps module attributes with timers while active. ``apply`` imports ``plan`` and
    ``rewrite_partitions`` by name, so each step is patched where it is looked up."""

    STEPS = (
        ("plan (reads commits, lists files)", apply_module, "plan"),
        ("rewrite_partitions", apply_module, "rewrite_partitions"),
        ("  write_bucket_files", rescale_module, "write_bucket_files"),
        ("    direct_write.write (Spark writes, reads footers back)", direct_write, "write"),
        ("archive_old_versions", apply_module.config_store, "archive_old_versions"),
    )

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        self.phases = Phases()

    @contextmanager
    def timing(self) -> Iterator[Phases]:
        self.phases = Phases()
        originals = [(module, name, getattr(module, name)) for _, module, name in self.STEPS]
        for (label, module, name), (_, _, original) in zip(self.STEPS, originals, strict=True):
            setattr(module, name, self._timed(label, original))
        first_job, first_compilation = self._next_job_id(), self._compilations()
        try:
            yield self.phases
        finally:
            for module, name, original in originals:
                setattr(module, name, original)
            self.phases.spark_jobs = self._next_job_id() - first_job
            self.phases.compiled_classes = self._compilations() - first_compilation

    def _timed(self, label: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.phases.seconds[label] += time.perf_counter() - start

        return timed

    def _next_job_id(self) -> int:
        """One past the newest Spark job id (ids are sequential), to count the jobs a run started."""
        tracker = self.spark.sparkContext.statusTracker()
        ids = [*tracker.getJobIdsForGroup(None), *tracker.getActiveJobsIds()]
        return max(ids, default=-1) + 1

    def _compilations(self) -> int:
        """Classes compiled so far in this JVM, from Spark's codegen metrics (a Scala object)."""
        source = self.spark.sparkContext._jvm.org.apache.spark.metrics.source
        metrics = getattr(getattr(source, "CodegenMetrics$"), "MODULE$")
        return int(metrics.METRIC_COMPILATION_TIME().getCount())


# --- the runs ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    seconds: float
    rows: int  # rows in the table's live files afterwards (rows written, for the plain job)
    files: int
    shuffle_free: bool = False
    phases: Phases | None = None
    load: float = field(default_factory=lambda: os.getloadavg()[0])  # 1-minute load average at the end


class Bench:
    def __init__(self, spark: SparkSession, base: Path, scratch: Path) -> None:
        self.spark = spark
        self.base = base
        self.scratch = scratch
        self.clock = PhaseClock(spark)

    @contextmanager
    def fresh_copy(self) -> Iterator[Path]:
        copy = self.scratch / "run"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(self.base, copy)
        try:
            yield copy
        finally:
            shutil.rmtree(copy, ignore_errors=True)

    def apply(self, layout: tuple[int, int], *, full_shuffle: bool = False) -> Run:
        with self.fresh_copy() as table:
            ctx = TableContext.open(self.spark, str(table))
            request = ApplyOptions(rules(layout), full_shuffle=full_shuffle)
            with self.clock.timing() as phases:
                start = time.perf_counter()
                result: ApplyResult = apply(ctx, request)
                seconds = time.perf_counter() - start
            return Run(
                seconds, count_live_rows(self.spark, table), result.files_written, result.shuffle_free, phases
            )

    def plain(self, layout: tuple[int, int]) -> Run:
        """The same live base files read, hash-partitioned by record key into as many tasks as ``apply``
        writes files, and written as Parquet to a scratch folder: Spark's own cost of moving the bytes."""
        output = self.scratch / "plain"
        with self.fresh_copy() as table:
            files = live_base_files(self.spark, table)
            start = time.perf_counter()
            (
                self.spark.read.parquet(*files)
                .repartition(files_in(layout), RECORD_KEY)
                .write.mode("overwrite")
                .parquet(str(output))
            )
            seconds = time.perf_counter() - start
        written = len(list(output.glob("*.parquet")))
        rows = self.spark.read.parquet(str(output)).count()
        shutil.rmtree(output)
        return Run(seconds, rows, written)

    def spark_split(self, layout: tuple[int, int], *, shuffle: bool) -> Run:
        """Spark alone moving the doubling's rows: read, add the bucket column (JVM), write partitioned by
        (partition, bucket), with one task per old file or after a hash repartition into 8 tasks."""
        output = self.scratch / "split"
        default, skewed = layout
        with self.fresh_copy() as table:
            files = live_base_files(self.spark, table)
            schema = self.spark.read.parquet(files[0]).schema
            partition = F.col("_hoodie_partition_path")
            counts = num_buckets_column(partition, {f"day={SKEWED_DAY}": skewed}, default)
            bucket = bucket_id_column(RECORD_KEY, counts, (), every_key_whole=True)
            start = time.perf_counter()
            read = lambda group: self.spark.read.schema(schema).parquet(*group)  # noqa: E731
            rows = read_in_groups(read, [[f] for f in files]).withColumn("bucket", bucket)
            if shuffle:
                rows = rows.repartition(SHUFFLE_PARTITIONS, partition, "bucket")
            with scoped_conf(self.spark, {} if shuffle else ONE_TASK_PER_READ):
                rows.write.partitionBy("_hoodie_partition_path", "bucket").parquet(str(output))
            seconds = time.perf_counter() - start
        written = len(list(output.rglob("*.parquet")))
        count = self.spark.read.parquet(str(output)).count()
        shutil.rmtree(output)
        return Run(seconds, count, written, shuffle_free=not shuffle)


def best(runs: list[Run]) -> Run:
    return min(runs, key=lambda r: r.seconds)


def check(label: str, run: Run, rows: int, files: int) -> None:
    assert run.rows == rows, f"{label}: {run.rows:,} rows after the run, {rows:,} before"
    assert run.files == files, f"{label}: {run.files} files written, {files} expected"


def describe(label: str, runs: list[Run]) -> str:
    times = ", ".join(f"{r.seconds:.1f} s @ load {r.load:.1f}" for r in runs)
    return f"{label:<34} best {best(runs).seconds:6.1f} s   (rounds: {times})"


def print_phases(label: str, run: Run) -> None:
    assert run.phases is not None
    seconds = run.phases.seconds
    print(
        f"  {label}: {run.seconds:.1f} s, {run.phases.spark_jobs} Spark jobs, "
        f"{run.phases.compiled_classes} generated classes compiled"
    )
    for step, _, _ in PhaseClock.STEPS:
        print(f"    {step:<40} {seconds.get(step, 0.0):6.1f} s")
        if step == "rewrite_partitions":
            reads = seconds.get(step, 0.0) - seconds.get("  write_bucket_files", 0.0)
            print(f"    {'  mergeSchema, key pass, reads':<40} {reads:6.1f} s")


def warm_up(spark: SparkSession, scratch: Path) -> None:
    """One throwaway create + shuffle-free + shuffling apply: JIT, Python workers, Arrow, Parquet."""
    root = scratch / "warm-up"
    create_table(spark, root, WARM_UP_ROWS)
    ctx = TableContext.open(spark, str(root))
    apply(ctx, ApplyOptions(rules(DOUBLED)))
    apply(ctx.reload(), ApplyOptions(rules(NON_MULTIPLE)))
    assert count_live_rows(spark, root) == WARM_UP_ROWS
    shutil.rmtree(root)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS, help="rows in the table")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each measurement; the best counts")
    parser.add_argument("--master", default="local[2]", help="Spark master, e.g. local-cluster[2,1,3072]")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder (printed)")
    args = parser.parse_args()
    if args.master.startswith("local-cluster"):  # executors are started from Spark's own scripts
        os.environ.setdefault("SPARK_HOME", str(Path(pyspark.__file__).parent))

    # Driver settings must be given before the JVM starts; build_session then adds the job's settings.
    os.environ.setdefault(
        "PYSPARK_SUBMIT_ARGS",
        f"--driver-memory {DRIVER_MEMORY} --conf spark.ui.enabled=false"
        " --conf spark.ui.showConsoleProgress=false pyspark-shell",
    )
    spark = build_session("bench-rescale", master=args.master)
    spark.sparkContext.setLogLevel("ERROR")
    spark.conf.set("spark.sql.shuffle.partitions", str(SHUFFLE_PARTITIONS))
    scratch = Path(tempfile.mkdtemp(prefix="bench-rescale-"))
    try:
        run_bench(spark, scratch, args.rows, args.rounds)
    finally:
        spark.stop()
        if args.keep:
            print(f"scratch kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


def run_bench(spark: SparkSession, scratch: Path, rows: int, rounds: int) -> None:
    print(
        f"Spark {spark.version}, {spark.sparkContext.master}, shuffle partitions {SHUFFLE_PARTITIONS}, driver {DRIVER_MEMORY}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} (other processes share the CPUs)"
    )
    start = time.perf_counter()
    warm_up(spark, scratch)
    print(f"warm-up (throwaway {WARM_UP_ROWS:,}-row table, two applies): {time.perf_counter() - start:.1f} s")

    base = scratch / "base"
    start = time.perf_counter()
    create_table(spark, base, rows)
    created = time.perf_counter() - start
    size = sum(f.stat().st_size for f in base.rglob("*.parquet"))
    assert count_live_rows(spark, base) == rows
    print(
        f"create: {rows:,} rows, {files_in(INITIAL)} files ({INITIAL[0]} buckets a day, {INITIAL[1]} for "
        f"{SKEWED_DAY}), {size / 2**20:.0f} MiB, write() took {created:.1f} s"
    )

    bench = Bench(spark, base, scratch)
    measurements: dict[str, Callable[[], Run]] = {
        "a. apply x2, shuffle-free": lambda: bench.apply(DOUBLED),
        "a. apply x2, full_shuffle=True": lambda: bench.apply(DOUBLED, full_shuffle=True),
        "b. apply 8->12 (shuffles)": lambda: bench.apply(NON_MULTIPLE),
        "b. plain read/repartition/write": lambda: bench.plain(NON_MULTIPLE),
        "c. Spark alone x2, no shuffle": lambda: bench.spark_split(DOUBLED, shuffle=False),
        "c. Spark alone x2, shuffle": lambda: bench.spark_split(DOUBLED, shuffle=True),
    }
    expected_files = dict(
        zip(
            measurements,
            (files_in(DOUBLED),) * 2 + (files_in(NON_MULTIPLE),) * 2 + (files_in(DOUBLED),) * 2,
            strict=True,
        )
    )
    runs: dict[str, list[Run]] = {label: [] for label in measurements}
    for _ in range(rounds):
        for label, measure in measurements.items():
            run = measure()
            check(label, run, rows, expected_files[label])
            runs[label].append(run)

    free, full, ours, plain, alone_free, alone_full = (runs[label] for label in measurements)
    assert all(r.shuffle_free for r in free), "doubling should take the shuffle-free path"
    assert not any(r.shuffle_free for r in full + ours), "these runs should shuffle"

    print(f"\nwall times, best of {rounds} round(s) (row counts checked after every run):")
    for label, label_runs in runs.items():
        print(describe(label, label_runs))
    print("\nwhere apply's time went (best round; nested steps are included in their parent):")
    for label, label_runs in list(runs.items())[:3]:
        print_phases(label, best(label_runs))

    speedup = best(full).seconds / best(free).seconds
    ceiling = best(alone_full).seconds / best(alone_free).seconds
    overhead = best(ours).seconds / best(plain).seconds
    print(f"\n=== summary: {rows:,} rows, best of {rounds} round(s) ===")
    print(f"{'table creation (write)':<38} {created:.1f} s")
    print(ratio_line("shuffle-free speedup (full / free)", speedup, ">=", TARGET_SPEEDUP))
    print(f"{'  Spark alone, same split (ceiling)':<38} {ceiling:.2f}x")
    print(ratio_line("apply overhead (apply / plain Spark)", overhead, "<=", TARGET_OVERHEAD))


def ratio_line(label: str, ratio: float, relation: str, target: float) -> str:
    met = ratio >= target if relation == ">=" else ratio <= target
    return f"{label:<38} {ratio:.2f}x (target {relation} {target}x)  {'met' if met else 'MISSED'}"


if __name__ == "__main__":
    main()
