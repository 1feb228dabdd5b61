"""Many partitions: how long plan and apply take, how large their reports and the table's status grow,
and what the operator holds for them.

Run: .venv/bin/python tests/bench/bench_many_partitions.py [--partitions N] [--table PATH]
Writing the table is most of the time: about 8 files a second on 2 cores (10,000 partitions: 20
minutes); ``--table`` reuses a table an earlier run made (it is copied, as apply rewrites it).

Our ``write`` makes a copy-on-write table of N partitions (``part=00000`` ...) with a plain bucket index
of 1. Then, each a fresh process as a job runs: ``plan`` of a rule that rescales a tenth of them, of a
default that rescales them all, and ``apply`` of a rule that rescales a hundredth. Each report is written
to a file (the size a job's ConfigMap would hold: at most 1 MiB) and read by the operator's own
``decide``, as a plan job's report: the status it writes, its size, the time and the memory that takes.
``--model N`` does the same for the pure core alone at N partitions (no table): the plan made from N
layouts, its report, and the operator's decision on it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/

from pyspark.sql import functions as F  # noqa: N812

from fresh_process import run_once
from hudi_bucket.commands.write import write
from hudi_bucket.contract.reports import JobReport, Outcome, PlanResult, TableBuckets, now_iso
from hudi_bucket.contract.requests import JobKind, WriteOptions
from hudi_bucket.core.planning import PartitionLayout, make_plan
from hudi_bucket.core.rules import BucketRules, PythonRegexMatcher
from hudi_bucket.report_sink import MAX_REPORT_BYTES
from hudi_bucket.spark.session import build_session
from hudi_bucket_operator.decide.decisions import JobPhase, Observed, ObservedJob
from hudi_bucket_operator.decide.reconcile import decide
from hudi_bucket_operator.resource.table_status import TableStatus
from lib.paths import jvm_jar


def make_table(root: Path, partitions: int, rows: int) -> float:
    spark = build_session("bench-many-partitions", "local[2]")
    started = time.perf_counter()
    id_ = F.col("id")
    data = spark.range(partitions * rows).select(
        F.concat(F.lit("K-"), id_.cast("string")).alias("key"),
        (id_ * 7).alias("quantity"),
        F.format_string("%05d", (id_ % partitions).cast("int")).alias("part"),
    )
    options = WriteOptions(
        source="", operation="insert", record_key=("key",), partition_fields=("part",), create=True,
        table_version=9, hive_style=True, default_buckets=1,
    )  # fmt: skip
    write(spark, str(root), options, rows=data)
    seconds = time.perf_counter() - started
    spark.stop()
    return seconds


def job(command: str, root: Path, report: Path, *rules: str) -> tuple[float, JobReport, int]:
    """A job in a fresh process: its seconds, its report, the report's size in bytes."""
    argv = [
        sys.executable,
        "-m",
        "hudi_bucket",
        command,
        "--table",
        str(root),
        "--report",
        str(report),
        *rules,
    ]
    env = {**os.environ, "HBO_JVM_JAR": str(jvm_jar())}
    seconds, _ = run_once(command, argv, env)
    text = report.read_bytes()
    return seconds, JobReport.from_json(text), len(text)


def status_for(report: JobReport) -> tuple[dict[str, object], float, int]:
    """The status the operator writes for this plan report; the seconds and the peak memory it took."""
    done = ObservedJob("t-plan-1", JobKind.PLAN, 1, "", JobPhase.COMPLETED, "t", 0, "", report)
    spec = {"table": {"uri": "/t"}, "buckets": {"default": 1, "rules": [{"pattern": "x", "buckets": 2}]}}
    tracemalloc.start()
    started = time.perf_counter()
    status = decide(Observed(spec, 1, {}, TableStatus(), (done,)), datetime.now(UTC)).status.to_api()
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return status, seconds, peak


def model(partitions: int) -> None:
    """The pure core at ``partitions`` partitions, each of one bucket rescaled to two."""
    file_id = "00000000-0000-0000-0000-000000000000-0"
    layouts = [PartitionLayout(f"part={i:06d}", (file_id,), 2, 3000) for i in range(partitions)]
    current, desired = BucketRules.parse("^$,1", 1), BucketRules.parse("^$,1", 2)
    started = time.perf_counter()
    plan = make_plan(layouts, current, desired, PythonRegexMatcher())
    planned = time.perf_counter() - started
    result = PlanResult(plan.reported(), {}).to_dict()
    report = JobReport(
        JobKind.PLAN, "/t", Outcome.SUCCEEDED, "", "", now_iso(), result, table_buckets=TableBuckets()
    )
    text = report.to_json()
    reported = time.perf_counter() - started - planned
    status, decided, peak = status_for(JobReport.from_json(text))
    print(
        "| partitions | plan s | report s | report bytes | fits a ConfigMap | status bytes | decide s | decide peak MiB |"
    )
    print("|---|---|---|---|---|---|---|---|")
    fits = "yes" if len(text) <= MAX_REPORT_BYTES else "NO"
    print(f"| {partitions:,} | {planned:.2f} | {reported:.2f} | {len(text):,} | {fits} | {len(json.dumps(status)):,} | "
          f"{decided:.2f} | {peak / 2**20:.1f} |")  # fmt: skip
    plan_status = status.get("plan") or {}
    print(f"  status.plan: {json.dumps({k: v for k, v in plan_status.items() if k != 'items'})[:400]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--rows-per-partition", type=int, default=2)
    parser.add_argument("--table", type=Path, help="a table an earlier run made (copied, not changed)")
    parser.add_argument("--model", type=int, help="the pure core alone at this many partitions")
    args = parser.parse_args()
    if args.model:
        model(args.model)
        return
    work = Path(tempfile.mkdtemp(prefix="hbo-bench-partitions-"))
    root = work / "table"
    if args.table:
        shutil.copytree(args.table, root)
    else:
        made = make_table(root, args.partitions, args.rows_per_partition)
        print(f"table: {args.partitions:,} partitions written in {made:.0f} s", flush=True)
    cases = [
        ("plan, a tenth rescaled", "plan", ("--expressions", "0$,2", "--default", "1")),
        ("plan, all rescaled", "plan", ("--expressions", "^$,1", "--default", "2")),
        ("apply, a hundredth rescaled", "apply", ("--expressions", "00$,2", "--default", "1")),
    ]
    print(
        "| run | seconds | changes | report bytes | fits a ConfigMap | status bytes | decide s | decide peak MiB |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, command, rules in cases:
        seconds, report, size = job(command, root, work / f"{command}.json", *rules)
        changes = (report.result.get("plan") or {}).get("partitions") or 0
        status, decided, peak = status_for(report) if command == "plan" else ({}, 0.0, 0)
        status_bytes = len(json.dumps(status)) if status else 0
        fits = "yes" if size <= MAX_REPORT_BYTES else "NO"
        print(f"| {name} | {seconds:.1f} | {changes:,} | {size:,} | {fits} | {status_bytes:,} | {decided:.2f} | "
              f"{peak / 2**20:.1f} |", flush=True)  # fmt: skip
        if status:
            plan = status.get("plan") or {}
            print(f"  status.plan: {json.dumps({k: v for k, v in plan.items() if k != 'items'})[:400]}")


if __name__ == "__main__":
    main()
