"""An apply on S3 through the faults a real S3, and the network in front of it, produce: a connection
reset mid-upload, a server that stalls past the client's timeout, a 500 InternalError on the request
that completes a multipart upload or on a Parquet footer's read. A transient fault is retried by S3A and
the AWS SDK, and the apply completes as it would have without it; a persistent one fails the apply after
a bounded number of attempts, saying what failed, and the table is rolled back as it was.

One copy-on-write table is written once; each case applies to its own copy in a bucket that S3A reaches
through the fault proxy (per-bucket settings: a short socket timeout, few retries, multipart uploads from
5 MB). ``pytest -s`` prints what each fault did. A table Apache Hudi wrote with its metadata table and
indexes meets a fault in Hudi's metadata writer, which the Native engine runs in the same instant.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from object_store.faults import (
    COMPLETE_MULTIPART_UPLOAD,
    INTERNAL_ERROR,
    UPLOAD_PART,
    Fault,
    FaultProxy,
    Match,
    Reset,
    Rule,
    Stall,
    parquet_tail,
)
from object_store.s3_tables import (
    hudi_rs_rows,
    hudi_spark_rows,
    open_uploads,
    s3_storage_listing,
    stray_files,
    upload,
)
from object_store.server import S3Server
from pyarrow import fs as pafs

from hudi_bucket.commands.write import write
from hudi_bucket.contract.requests import WriteOptions
from hudi_bucket.core.filegroups import BaseFile
from hudi_bucket.spark.context import TableContext
from lib.cli_runs import Run, run
from lib.hudi_spark import metadata_table_listing
from lib.hudi_tables import WITH_INDEXES, HudiBucketTables

BUCKET = "faulty"
TIMEOUT_MS = 1500  # the socket timeout (fs.s3a.connection.timeout): what a stall costs
ATTEMPTS = 2  # the AWS SDK's retries of a request (fs.s3a.attempts.maximum)
RETRIES = 2  # S3A's own retries of an operation, each making the SDK's (fs.s3a.retry.limit)
TRIES = (1 + ATTEMPTS) * (1 + RETRIES)  # the most requests one operation may make
BUCKET_SETTINGS = {
    "connection.timeout": str(TIMEOUT_MS),
    "attempts.maximum": str(ATTEMPTS),
    "retry.limit": str(RETRIES),
    "retry.interval": "50ms",
    "retry.throttle.interval": "20ms",
    # A file above 5 MB (S3's smallest part) is uploaded in parts: each rewritten bucket file is.
    "multipart.size": "5M",
    "multipart.threshold": "5M",
}
# One partition of 14,000 rows rescaled 4 -> 2 buckets; a row's payload, 16 SHA-512s in hex, is 2 KB that
# GZIP (the table's codec: Hudi's default) halves: each new bucket file is about 7 MB. A small partition
# stays as it is.
BIG_ROWS, SMALL_ROWS, PAYLOAD_HASHES = 14_000, 200, 16
OLD_FILES, NEW_FILES = 2 * 4, 2
APPLY = ["--expressions", "^big$,2", "--default", "4"]

STALL = Stall(3 * TIMEOUT_MS / 1000)
# A footer's read begins with the file's last 8 bytes; any other read of a data file comes after it (the
# footer itself, then the pages).
FOOTER_READ = Match("GET", key=r"\.parquet$", range=parquet_tail)
DATA_READ = Match("GET", key=r"\.parquet$", range=lambda header: not parquet_tail(header))
FAULTS: dict[str, tuple[str, Match, Fault]] = {
    "reset-upload": ("reset mid-upload (UploadPart)", UPLOAD_PART, Reset(1 << 20)),
    "stall-read": ("stall on a data file's read", DATA_READ, STALL),
    "stall-upload": ("stall on an upload (UploadPart)", UPLOAD_PART, STALL),
    "500-complete": ("500 on CompleteMultipartUpload", COMPLETE_MULTIPART_UPLOAD, INTERNAL_ERROR),
    "500-footer": ("500 on a footer read", FOOTER_READ, INTERNAL_ERROR),
}
# What the AWS SDK says of a 500 InternalError, in what the job says.
INTERNAL_ERROR_SAID = "Status Code: 500; Error Code: InternalError"


def rule(fault: str, times: int | None) -> Rule:
    name, match, action = FAULTS[fault]
    return Rule(name, match, action, times=times)


@dataclass(frozen=True)
class Readback:
    """What Apache Hudi's Spark reader reads of a table: its rows, distinct keys, and a digest of them."""

    rows: int
    keys: int
    digest: int

    @classmethod
    def of(cls, spark: Any, uri: str) -> Readback:
        from pyspark.sql import functions as F  # noqa: N812

        columns = ("id", "part", "ts", "payload")
        got = (
            spark.read.format("hudi")
            .load(uri)
            .agg(
                F.count("*").alias("rows"),
                F.countDistinct("id").alias("keys"),
                F.sum(F.xxhash64(*columns)).alias("digest"),
            )
            .first()
        )
        return cls(int(got["rows"]), int(got["keys"]), int(got["digest"]))


@dataclass(frozen=True)
class Outcome:
    """A line of the printed table."""

    fault: str
    kind: str
    code: int
    before: Readback
    after: Readback
    verified: bool
    strays: int
    counts: str

    def cells(self) -> tuple[str, ...]:
        return (
            self.fault,
            self.kind,
            str(self.code),
            f"{self.before.rows} → {self.after.rows}",
            f"{self.before.keys} → {self.after.keys}",
            "ok" if self.verified else "FAILED",
            str(self.strays),
            self.counts,
        )


HEADER = (
    "fault",
    "kind",
    "exit",
    "rows (Hudi)",
    "distinct keys",
    "verify",
    "strays",
    "proxy, during the apply",
)
OUTCOMES: list[Outcome] = []


@pytest.fixture(scope="module", autouse=True)
def fault_table() -> Iterator[None]:
    """Prints what each case did once the module is done (``pytest -s`` shows it)."""
    yield
    if OUTCOMES:
        rows = [HEADER, *(o.cells() for o in OUTCOMES)]
        widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
        rows.insert(1, tuple("-" * w for w in widths))
        print("\n\nS3 faults during an apply (tests/object_store/test_s3_faults.py)")
        for row in rows:
            print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


@pytest.fixture(scope="module")
def proxy(spark: Any, s3: S3Server) -> Iterator[FaultProxy]:
    """The fault proxy, and the bucket S3A reaches through it. Its settings are read once: S3A keeps a
    bucket's filesystem for the run, so the rules change, not the settings."""
    s3.filesystem().create_dir(BUCKET)
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    with FaultProxy(s3.port) as running:
        settings = {"endpoint": running.endpoint, **BUCKET_SETTINGS}
        for key, value in settings.items():
            conf.set(f"fs.s3a.bucket.{BUCKET}.{key}", value)
        try:
            yield running
        finally:
            for key in settings:
                conf.unset(f"fs.s3a.bucket.{BUCKET}.{key}")


@pytest.fixture(scope="module")
def written(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Readback]:
    """The table, written once on the local disk, and what Hudi reads of it."""
    from pyspark.sql import functions as F  # noqa: N812

    root = tmp_path_factory.mktemp("faults") / "orders"
    payload = F.concat(*(F.sha2(F.concat_ws(":", "id", F.lit(i)), 512) for i in range(PAYLOAD_HASHES)))
    rows = spark.range(BIG_ROWS + SMALL_ROWS).select(
        F.concat(F.lit("K-"), F.col("id")).alias("id"),
        F.when(F.col("id") < BIG_ROWS, "big").otherwise("small").alias("part"),
        F.lit(1).alias("ts"),
        payload.alias("payload"),
    )
    options = WriteOptions(
        source="", record_key=("id",), partition_fields=("part",), ordering_field="ts", create=True,
        default_buckets=4,
    )  # fmt: skip
    write(spark, str(root), options, rows=rows)
    return root, Readback.of(spark, str(root))


@pytest.fixture
def table(s3: S3Server, written: tuple[Path, Readback]) -> str:
    """A copy of the table in the faulty bucket; its ``s3a://`` URI."""
    prefix = s3.fresh_prefix("faults")
    pafs.copy_files(str(written[0]), f"{BUCKET}/{prefix}", destination_filesystem=s3.filesystem())
    return f"s3a://{BUCKET}/{prefix}"


def timeline(spark: Any, uri: str) -> Any:
    return TableContext.open(spark, uri).table.timeline


def completed(spark: Any, uri: str) -> set[str]:
    return {i.timestamp for i in timeline(spark, uri).completed()}


def apply_through(
    proxy: FaultProxy, injected: Rule, capsys: pytest.CaptureFixture[str], *argv: str
) -> tuple[Run, str]:
    """The apply with ``injected`` in force; what the proxy did meanwhile."""
    forwarded = proxy.forwarded
    with proxy.injecting(injected):
        applied = run(capsys, "apply", *argv)
    tries = ", ".join(map(str, sorted(injected.by_target.values())))
    return applied, (
        f"{injected.matched} matched, {injected.injected} × {injected.fault}"
        + (f" (tries of each operation: {tries})" if injected.persistent else "")
        + f", {proxy.forwarded - forwarded} forwarded"
    )


@pytest.mark.parametrize(
    ("fault", "times"),
    [("reset-upload", 1), ("stall-read", 1), ("stall-upload", 1), ("500-complete", 2), ("500-footer", 2)],
    ids=lambda value: value if isinstance(value, str) else f"first-{value}",
)
def test_a_transient_fault_is_retried_and_the_apply_completes_as_it_would_without_it(
    spark: Any, s3: S3Server, proxy: FaultProxy, written: tuple[Path, Readback], table: str,
    capsys: pytest.CaptureFixture[str], fault: str, times: int,
) -> None:  # fmt: skip
    before, committed = written[1], completed(spark, table)
    injected = rule(fault, times)

    applied, counts = apply_through(proxy, injected, capsys, "--table", table, *APPLY)

    after, verified = Readback.of(spark, table), run(capsys, "verify", "--table", table)
    strays = stray_files(s3, table, completed(spark, table))
    OUTCOMES.append(
        Outcome(injected.name, f"transient ×{times}", applied.code, before, after, verified.code == 0,
                len(strays), counts)
    )  # fmt: skip
    assert applied.code == 0, applied.err
    assert injected.injected == times  # it happened, and a retry got past it
    result = applied.report["result"]
    assert completed(spark, table) == committed | {result["instant"]}
    assert result["filesWritten"] == NEW_FILES
    assert after == before
    assert verified.code == 0, verified.err
    assert strays == []
    assert timeline(spark, table).pending() == ()
    assert open_uploads(spark, table) == []


# How many operations (requests retried as one) the apply could meet the fault in, what it then raises,
# and words of its message.
@pytest.mark.parametrize(
    ("fault", "operations", "error", "says"),
    [
        # Two parts a file.
        pytest.param(
            "reset-upload", NEW_FILES * 2, "AWSClientIOException", "Connection reset", id="reset-upload"
        ),
        pytest.param(
            "500-complete", NEW_FILES, "AWSStatus500Exception", INTERNAL_ERROR_SAID, id="500-complete"
        ),
        pytest.param(
            "500-footer", OLD_FILES + NEW_FILES, "AWSStatus500Exception", INTERNAL_ERROR_SAID, id="500-footer"
        ),
    ],
)
def test_a_persistent_fault_fails_the_apply_after_bounded_retries_saying_why_and_the_table_is_rolled_back(
    spark: Any, s3: S3Server, proxy: FaultProxy, written: tuple[Path, Readback], table: str,
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fault: str, operations: int, error: str, says: str,
) -> None:  # fmt: skip
    before, committed = written[1], completed(spark, table)
    report = tmp_path / "report.json"
    injected = rule(fault, None)

    applied, counts = apply_through(
        proxy, injected, capsys, "--table", table, *APPLY, "--report", str(report)
    )

    after, verified = Readback.of(spark, table), run(capsys, "verify", "--table", table)
    strays = stray_files(s3, table, completed(spark, table))
    OUTCOMES.append(
        Outcome(injected.name, "persistent", applied.code, before, after, verified.code == 0, len(strays),
                counts)
    )  # fmt: skip
    assert applied.code == 1
    # Each operation that failed was tried by the SDK and by S3A, no more than their settings allow, and
    # no more operations failed than the apply makes.
    assert injected.by_target
    assert all(1 + ATTEMPTS <= n <= TRIES for n in injected.by_target.values()), injected.by_target
    assert len(injected.by_target) <= operations
    # One line says what failed, and the report the operator reads says it too.
    said = applied.err.strip()
    assert "\n" not in said
    assert says in said
    reported = json.loads(report.read_text())["error"]
    assert reported["type"] == error
    assert reported["message"] in said
    # Rolled back: as it was, nothing of ours pending, no file or upload left behind.
    assert after == before
    assert verified.code == 0, verified.err
    assert completed(spark, table) == committed
    assert timeline(spark, table).pending() == ()
    assert strays == []
    assert open_uploads(spark, table) == []


def test_the_stray_file_check_finds_files_of_no_completed_instant_and_a_slice_written_twice(
    spark: Any, s3: S3Server, proxy: FaultProxy, table: str
) -> None:
    """The check the cases above rely on, on files planted beside a live one."""
    folder = f"{table.removeprefix('s3a://')}/big"
    fs = s3.filesystem()
    live = min(
        i.base_name for i in fs.get_file_info(pafs.FileSelector(folder)) if i.base_name.endswith(".parquet")
    )
    base = BaseFile.parse("big", live)
    assert base is not None
    planted = [
        f"{base.file_id}_1-7-1_{base.instant}.parquet",  # a retried task's file beside the first's
        f"{base.file_id}_0-0-0_29991231235959999.parquet",  # of an instant that never completed
        "part-00000-c000.snappy.parquet",  # not named as Hudi names a base file
    ]
    for name in planted:
        with fs.open_output_stream(f"{folder}/{name}") as out:
            out.write(b"PAR1")
    assert stray_files(s3, table, completed(spark, table)) == sorted(f"big/{n}" for n in [live, *planted])


# Hudi's metadata writer, applying our replacecommit, writes its files partition's log file first; the
# rules move records (4 -> 8 buckets, 2 -> 3) so that every index has entries to write.
METADATA_TABLE_WRITE = Match("PUT", key=r"/\.hoodie/metadata/files/")
METADATA_RULES = ["--expressions", "day=2025-11-11,8;day=2025-11-1[23],3", "--default", "2"]


@pytest.fixture
def with_metadata_table(hudi_tables: HudiBucketTables, tmp_path: Path) -> Path:
    """A bucket table Apache Hudi wrote with its metadata table and indexes (``WITH_INDEXES``)."""
    root = tmp_path / "orders"
    hudi_tables.copy(root, 9, WITH_INDEXES)
    return root


def test_a_fault_in_hudis_metadata_writer_on_s3_rolls_back_data_and_metadata_table_and_the_next_apply_keeps_both(
    spark: Any, s3: S3Server, proxy: FaultProxy, with_metadata_table: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = upload(s3, with_metadata_table, BUCKET, s3.fresh_prefix("metadata"))
    before, committed = hudi_spark_rows(spark, table), completed(spark, table)
    injected = Rule("500 on the metadata table's writes", METADATA_TABLE_WRITE, INTERNAL_ERROR, times=None)

    failed, _ = apply_through(proxy, injected, capsys, "--table", table, *METADATA_RULES)

    assert failed.code == 1
    assert injected.injected  # the metadata writer met it
    # Both rolled back: nothing of ours completed or pending, the metadata table lists what storage holds,
    # readers through it read what they read, and no file is left behind.
    assert completed(spark, table) == committed
    assert timeline(spark, table).pending() == ()
    assert metadata_table_listing(spark, table) == s3_storage_listing(s3, table)
    assert hudi_spark_rows(spark, table) == before
    assert stray_files(s3, table, completed(spark, table)) == []

    applied = run(capsys, "apply", "--table", table, *METADATA_RULES)

    assert applied.code == 0, applied.err
    assert any("kept in the same instant" in note for note in applied.report["result"]["notes"])
    assert metadata_table_listing(spark, table) == s3_storage_listing(s3, table)
    assert hudi_spark_rows(spark, table) == before == hudi_rs_rows(s3, table)
    assert run(capsys, "verify", "--table", table).code == 0
