"""The training run of the jobs' class-data archive (./dev's jvm_archive): the jobs' commands, one after
the other in this one process, on a small table it writes first.

Its JVM, started with -XX:ArchiveClassesAtExit, dumps the classes it loaded (Spark's, Hadoop's, Parquet's,
Hudi's and ours) into the archive when it exits. A later JVM on the same classpath, started with
-XX:SharedArchiveFile, maps them instead of reading, verifying and linking each again: seconds of every
job's start. What the commands return does not matter here (the tests check the jobs); what they load does.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_bucket.cli import main

DAYS = [f"2025-11-{day:02d}" for day in range(1, 7)]


def write_source(path: Path, rows: int) -> None:
    pq.write_table(
        pa.table(
            {
                "id": [f"id-{i:07d}" for i in range(rows)],
                "day": [DAYS[i % len(DAYS)] for i in range(rows)],
                "amount": [i * 0.5 for i in range(rows)],
                "updated_at": list(range(rows)),
            }
        ),
        path,
    )


def commands(source: Path) -> list[list[str]]:
    write = ["write", "--source", str(source), "--record-key", "id", "--partition-field", "day"]
    write += ["--ordering-field", "updated_at", "--hive-style"]
    rules = ["--expressions", "day=2025-11-0[12],8", "--default", "4"]
    return [
        [*write, "--create"],
        [*write, "--operation", "upsert"],
        ["show"],
        ["plan", *rules],
        ["apply", *rules],
        ["verify"],
        ["show", "--format", "json"],
    ]


def train() -> int:
    with tempfile.TemporaryDirectory() as work:
        source, table, report = Path(work, "source.parquet"), Path(work, "table"), Path(work, "report.json")
        write_source(source, 20_000)
        for command in commands(source):
            code = main([*command, "--table", str(table), "--master", "local[1]", "--report", str(report)])
            print(f"train_class_archive: {command[0]} exited {code}", file=sys.stderr)
    exit_the_jvm()
    return 0


def exit_the_jvm() -> None:
    """Stop the session and wait for its JVM to exit, and so to have written the archive: the JVM exits
    when its stdin closes (PySpark's gateway server), but by itself only after this process has."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    if SparkContext._active_spark_context is not None:
        SparkContext._active_spark_context.stop()
    if gateway is not None:
        gateway.shutdown()
        gateway.proc.stdin.close()
        gateway.proc.wait(timeout=600)


if __name__ == "__main__":
    sys.exit(train())
