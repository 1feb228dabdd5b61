"""What object storage costs: `apply` on an ``s3a://`` table against the same `apply` on local disk, and
`plan` on a table of 10,000 files on S3, with the time its listings take.

Run: .venv/bin/python tests/bench/bench_s3.py [--rows N] [--rounds R] [--files F]
(defaults: 200,000 rows, 2 rounds, 10,000 files: a few minutes on 2 idle cores.)

The S3 server is the tests' own (versitygw over a local folder on loopback, tests/object_store), so a
request costs a loopback round trip and a local file operation: what S3 adds on top (tens of ms a
request, more for a copy) multiplies the request counts printed here, it does not show in the seconds.

a. ``apply`` doubling every partition's buckets (shuffle-free) and then a non-multiple change (a full
   shuffle), each from a fresh copy of one table: on local disk (``file://`` through LocalStorage) and on
   S3 (``s3a://`` through Hadoop's S3A), with bucket files written at their final names (our commit
   protocol, ``writing.direct_write``) and, for comparison, staged and moved into place (``writing.staged_write``,
   what a Spark without our jar does). Each figure is the best of its rounds; the S3/local ratio is
   printed, with the seconds Spark spent writing, moving files into place, and finding each file's size
   and rows (the staged write reads the footers in a Spark job of its own; the direct write's tasks
   read them back as they write, so that time is within its writing), and the requests S3A made (from
   its own statistics).
b. ``plan`` on a table of ``--files`` base files (20 partitions), on local disk and uploaded to S3, twice
   each: total seconds, and the seconds spent listing the partitions (wall time: they are listed in
   parallel on S3), with the number of ``Storage.list`` calls the whole plan made. On S3 the listings
   go through the native S3 client (``storage.native_s3``, the default), then through S3A for
   comparison; then the same partitions listed by a bare S3 client (pyarrow's, outside any plan).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).parents[1])]  # tests/

from object_store.server import S3Server, ensure_binary  # noqa: E402
from pyarrow import fs as pafs  # noqa: E402
from pyspark.sql import DataFrame, SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402, N812

from hudi_bucket.commands.apply import apply  # noqa: E402
from hudi_bucket.commands.plan import plan  # noqa: E402
from hudi_bucket.commands.write import write  # noqa: E402
from hudi_bucket.contract.requests import ApplyOptions, RescaleOptions, WriteOptions  # noqa: E402
from hudi_bucket.core.rules import BucketRules  # noqa: E402
from hudi_bucket.hudi import fs_view as fs_view_module  # noqa: E402
from hudi_bucket.spark.context import TableContext  # noqa: E402
from hudi_bucket.spark.session import configure, use_this_python_for_workers  # noqa: E402
from hudi_bucket.storage.base import PARALLEL_REQUESTS  # noqa: E402
from hudi_bucket.storage.hadoop import HadoopStorage  # noqa: E402
from hudi_bucket.storage.local import LocalStorage  # noqa: E402
from hudi_bucket.storage.native_s3 import SWITCH  # noqa: E402
from hudi_bucket.writing import direct_write, staged_write  # noqa: E402
from hudi_bucket.writing import rescale as rescale_module  # noqa: E402
from lib.paths import jvm_jar, s3a_jars  # noqa: E402

DAYS = [f"2025-11-{d:02d}" for d in range(8, 14)]
INITIAL, DOUBLED, RESHUFFLED = (4, 8), (8, 16), (6, 12)  # (default, 2025-11-11)


def rules(layout: tuple[int, int]) -> BucketRules:
    return BucketRules.parse(f"11-11,{layout[1]}", layout[0])


def dataset(spark: SparkSession, rows: int, days: list[str]) -> DataFrame:
    id_ = F.col("id")
    return spark.range(rows).select(
        F.concat(F.lit("K-"), id_.cast("string")).alias("key"),
        (id_ % 100_000 / 100.0).alias("price"),
        F.substring(F.sha2(id_.cast("string"), 256), 1, 30).alias("note"),
        F.element_at(F.array(*(F.lit(d) for d in days)), (id_ % len(days) + 1).cast("int")).alias("day"),
    )


def create_table(spark: SparkSession, root: Path, frame: DataFrame, expressions: str, default: int) -> None:
    request = WriteOptions(
        source="",
        operation="insert",
        record_key=("key",),
        partition_fields=("day",),
        create=True,
        table_version=9,
        hive_style=True,
        expressions=expressions,
        default_buckets=default,
    )
    write(spark, str(root), request, rows=frame)


class Clock:
    """Seconds (and calls) spent in wrapped functions while ``timing()`` is active."""

    def __init__(self, steps: list[tuple[str, Any, str]]) -> None:
        self.steps = steps
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    @contextmanager
    def timing(self) -> Iterator[Clock]:
        self.seconds.clear()
        self.calls.clear()
        originals = [(owner, name, getattr(owner, name)) for _, owner, name in self.steps]
        for (label, owner, name), (_, _, original) in zip(self.steps, originals, strict=True):
            setattr(owner, name, self._timed(label, original))
        try:
            yield self
        finally:
            for owner, name, original in originals:
                setattr(owner, name, original)

    def _timed(self, label: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[label] += time.perf_counter() - start
                self.calls[label] += 1

        return timed


APPLY_STEPS = [
    ("write_bucket_files", rescale_module, "write_bucket_files"),
    ("direct write", direct_write, "write"),  # its tasks read each file's footer back
    ("staged write", staged_write, "write"),  # its Spark write, then the three below
    ("staged footers", staged_write, "_row_counts"),
    ("moving", staged_write, "_move_all"),
]
# S3A's request counters (its IOStatistics), summed into the kinds of S3 request they count.
REQUEST_KINDS = {
    "PUT": ("object_put_request",),
    "GET": ("stream_read_opened",),
    "HEAD": ("object_metadata_request",),
    "LIST": ("object_list_request", "object_continue_list_request"),
    "COPY": ("object_copy_requests",),
    "DELETE": ("object_delete_request", "object_bulk_delete_request"),
}
WRITES = ("direct", "staged")
CHANGES = ("doubling (no shuffle)", "6/12 (full shuffle)")


# Where plan runs, in this order: the native client lists before S3A does, so S3A's listing code is as
# cold as in a job's new JVM, but the rest of S3A (reading the timeline) is warm for it.
PLAN_RUNS = [
    ("local disk", "local", False),
    ("S3, native client lists", "s3", True),
    ("S3, S3A lists", "s3", False),
]

# Partitions are listed in parallel on an object store: their listing's wall time is the time spent in
# _partition_listings; every Storage.list call is counted (their summed seconds would overlap).
LIST_STEPS = [
    ("partition listings", fs_view_module, "_partition_listings"),
    ("list (s3a)", HadoopStorage, "list"),
    ("list (local)", LocalStorage, "list"),
]


def upload(s3: S3Server, local: Path, key: str) -> str:
    pafs.copy_files(
        str(local), f"{s3.bucket}/{key}", destination_filesystem=s3.filesystem(), use_threads=True
    )
    return s3.uri(key)


def s3_requests(spark: SparkSession, uri: str) -> dict[str, int]:
    """S3A's request counts so far, by kind (the FileSystem instance is shared by every task here)."""
    jvm = spark.sparkContext._jvm
    fs = jvm.org.apache.hadoop.fs.Path(uri).getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    counters = fs.getIOStatistics().counters()
    return {kind: sum(int(counters.get(n) or 0) for n in names) for kind, names in REQUEST_KINDS.items()}


@contextmanager
def writing(how: str) -> Iterator[None]:
    """Bucket files written directly, or staged as on a Spark without our commit protocol."""
    available = direct_write.available
    if how == "staged":
        direct_write.available = lambda _: False  # type: ignore[assignment]
    try:
        yield
    finally:
        direct_write.available = available  # type: ignore[assignment]


def split(steps: dict[str, float]) -> tuple[float, float, float]:
    """(Spark writing, moving into place, finding sizes and rows) in one apply's step seconds."""
    moving = steps.get("moving", 0.0)
    finding = steps.get("staged footers", 0.0)  # the direct write's tasks read them back as they write
    staged = steps.get("staged write", 0.0) - moving - steps.get("staged footers", 0.0)
    return steps.get("direct write", 0.0) + staged, moving, finding


def bench_apply(spark: SparkSession, s3: S3Server, work: Path, rows: int, rounds: int) -> None:
    template = work / "apply-template"
    create_table(spark, template, dataset(spark, rows, DAYS), f"11-11,{INITIAL[1]}", INITIAL[0])
    clock = Clock(APPLY_STEPS)
    best: dict[tuple[str, str, str], tuple[float, dict[str, float], dict[str, int]]] = {}
    for round_ in range(rounds):
        for how in WRITES:
            for where in ("local", "s3"):
                if where == "local":
                    copy = work / f"apply-{how}-{round_}"
                    shutil.copytree(template, copy)
                    uri = copy.as_uri()
                else:
                    uri = upload(s3, template, s3.fresh_prefix(f"apply-{how}-{round_}"))
                for change, layout in zip(CHANGES, (DOUBLED, RESHUFFLED), strict=True):
                    ctx = TableContext.open(spark, uri)
                    requests_before = s3_requests(spark, uri) if where == "s3" else {}
                    with writing(how), clock.timing():
                        start = time.perf_counter()
                        result = apply(ctx, ApplyOptions(rules(layout)))
                        seconds = time.perf_counter() - start
                    assert result.instant is not None, change
                    requests = (
                        {k: v - requests_before[k] for k, v in s3_requests(spark, uri).items()}
                        if where == "s3"
                        else {}
                    )
                    previous = best.get((how, change, where))
                    if previous is None or seconds < previous[0]:
                        best[(how, change, where)] = (seconds, dict(clock.seconds), requests)
    print(f"a. apply on S3 against local disk, {rows:,} rows over {len(DAYS)} days (best of {rounds}):")
    for change in CHANGES:
        print(f"   {change}")
        for how in WRITES:
            (local, local_steps, _), (remote, remote_steps, requests) = (
                best[(how, change, "local")],
                best[(how, change, "s3")],
            )
            print(
                f"     {how:6} write   local {local:6.2f} s   s3 {remote:6.2f} s   ratio s3/local {remote / local:4.2f}"
            )
            for label, at_local, at_s3 in zip(
                ("Spark writing", "moving into place", "sizes and rows"),
                split(local_steps),
                split(remote_steps),
                strict=True,
            ):
                print(f"       {label:18} local {at_local:6.2f} s   s3 {at_s3:6.2f} s")
            print("       S3 requests        " + "  ".join(f"{k} {v}" for k, v in requests.items()))


def bench_plan(spark: SparkSession, s3: S3Server, work: Path, files: int) -> None:
    days = [f"2025-{1 + d // 28:02d}-{1 + d % 28:02d}" for d in range(20)]
    per_day = files // len(days)
    template = work / "plan-template"
    create_table(spark, template, dataset(spark, files * 4, days), "^$,1", per_day)
    started = time.perf_counter()
    key = s3.fresh_prefix("plan")
    uri = upload(s3, template, key)
    print(
        f"b. plan on {per_day * len(days):,} files in {len(days)} partitions [upload took {time.perf_counter() - started:.1f} s]"
    )
    clock = Clock(LIST_STEPS)
    listing: dict[str, list[float]] = {}
    for where, target, native in PLAN_RUNS:
        spark.conf.set(SWITCH, str(native).lower())
        for round_ in ("first", "again"):
            ctx = TableContext.open(spark, template.as_uri() if target == "local" else uri)
            with clock.timing():
                start = time.perf_counter()
                result, _ = plan(ctx, RescaleOptions(BucketRules.parse("^$,1", per_day * 2)))
                seconds = time.perf_counter() - start
            assert len(result.changes) == len(days)
            listed = clock.seconds["partition listings"]
            listing.setdefault(where, []).append(listed)
            calls = clock.calls["list (s3a)"] + clock.calls["list (local)"]
            print(
                f"   {where:28} {round_:5}: {seconds:5.2f} s, of which listing {listed:5.2f} s "
                f"({calls} list calls, {100 * listed / seconds:3.0f}%)"
            )
    spark.conf.unset(SWITCH)
    native, s3a = (min(listing[where]) for where, _, _ in PLAN_RUNS[1:])
    print(
        f"   listing on S3, S3A / native client (best of each): {s3a:.2f} / {native:.2f} s = {s3a / native:.1f}x; "
        f"a bare S3 client (pyarrow's, {PARALLEL_REQUESTS} at once, no Spark): {bare_listing(s3, key):.2f} s"
    )


def bare_listing(s3: S3Server, key: str) -> float:
    """Seconds to list each partition of the table at ``key`` with pyarrow's S3 client (the AWS C++ SDK,
    no JVM, no Hadoop), as many at once as our listings: what the server itself costs."""
    fs = s3.filesystem()
    top = fs.get_file_info(pafs.FileSelector(f"{s3.bucket}/{key}"))
    partitions = [
        i.path for i in top if i.type == pafs.FileType.Directory and not i.base_name.startswith(".")
    ]
    started = time.perf_counter()
    with ThreadPoolExecutor(PARALLEL_REQUESTS) as pool:
        listed = list(pool.map(lambda p: fs.get_file_info(pafs.FileSelector(p)), partitions))
    seconds = time.perf_counter() - started
    assert sum(len(files) for files in listed) > 0
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--only", choices=["apply", "plan"])
    args = parser.parse_args()

    server = S3Server(ensure_binary())
    server.start()
    use_this_python_for_workers()
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("bench_s3")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.driver.memory", "3g")
        .config("spark.jars", ",".join(str(jar) for jar in [jvm_jar(), *s3a_jars()]))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    configure(spark)
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    for key, value in server.hadoop_conf().items():
        conf.set(key, value)
    work = Path(tempfile.mkdtemp(prefix="bench-s3-"))
    try:
        if args.only in (None, "apply"):
            bench_apply(spark, server, work, args.rows, args.rounds)
        if args.only in (None, "plan"):
            bench_plan(spark, server, work, args.files)
    finally:
        spark.stop()
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
