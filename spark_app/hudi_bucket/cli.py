"""`hudi-bucket-job <command> --table URI [options]`: what every SparkApplication (and the local mode) runs.

The command line is the contract's (``contract.requests``: one typed request per job kind); each command
here opens the table and calls one typed function in ``hudi_bucket.commands``. Exit codes are decided in one
place (``main``): 0 done, 1 refused or failed (one line on stderr says why and what to do), 2 bad usage.
With ``--report URI`` the JSON report is written whatever the outcome.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hudi_bucket.contract.reports import (
    ConfigMapReport,
    JobError,
    JobReport,
    Outcome,
    TableBuckets,
    now_iso,
)
from hudi_bucket.contract.requests import (
    HUDI_BUNDLE_ENV,
    ApplyRequest,
    JobKind,
    JobRequest,
    PlanRequest,
    RollbackRequest,
    ShowFormat,
    ShowRequest,
    VerifyRequest,
    WriteRequest,
    build_parser,
    request_from,
)
from hudi_bucket.core.report_json import ReportedResult
from hudi_bucket.errors import HudiBucketError

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser(__doc__.split("\n")[0]).parse_args(argv)  # bad usage exits here, with 2
    kind = JobKind(args.command)
    started = now_iso()
    spark, text = None, None
    try:
        request = request_from(args)
        spark = _session(request)
        done = COMMANDS[kind](spark, request)
        report = JobReport(
            kind,
            args.table,
            done.outcome,
            done.message,
            started,
            now_iso(),
            done.result.to_dict(),
            table_buckets=done.table_buckets,
        )
        text = done.text
    except HudiBucketError as err:
        # What it found still goes in the report (a verify's violations, the plan an apply found instead
        # of the approved one), for the operator's status.
        found = {} if err.result is None else err.result.to_dict()
        report = JobReport(
            kind, args.table, Outcome.FAILED, str(err), started, now_iso(), found, JobError.of(err)
        )
    except Exception as err:
        # A failure in Spark's JVM that no layer made one of ours (a storage request failing after the
        # client's retries, in the driver or in a Spark task) fails the job as ours do: one line, and
        # the report, so the operator can say why. Python's own exceptions are bugs, and keep their trace.
        error = _jvm_failure(err)
        if error is None:
            raise
        message = f"{error.message} ({error.hint})"
        report = JobReport(kind, args.table, Outcome.FAILED, message, started, now_iso(), {}, error)
    if getattr(args, "report", ""):
        try:
            _write_report(args.report, report, spark)
        except HudiBucketError as err:
            print(f"hudi-bucket-job {kind}: could not write the report: {err}", file=sys.stderr)
            return EXIT_FAILED
    if report.outcome is Outcome.FAILED:
        print(f"hudi-bucket-job {kind}: {report.message}", file=sys.stderr)
        return EXIT_FAILED
    print(json.dumps(report.to_dict(), indent=2) if text is None else text)
    return EXIT_OK


# What a failure beneath the job leaves: the instant it wrote, to roll back (see writing.instants).
JVM_FAILURE_HINT = (
    "a storage or Spark call failed, after the storage client's own retries; an apply or write that did "
    "not complete is rolled back (by the next run, if not now): retry once the cause is gone"
)
# Spark's and py4j's exceptions wrap the one that says what failed (a task's, a storage client's).
_WRAPPERS = ("org.apache.spark.", "py4j.")


def _jvm_failure(err: Exception) -> JobError | None:
    """What a Java exception raised through py4j (as such, or as PySpark converted it) says, on one line:
    its first cause that is not one of Spark's wrappers (a job abort wraps the task's failure), else its
    own. None for any other exception."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    if not isinstance(err, Py4JJavaError | PySparkException):
        return None
    throwable = getattr(err, "java_exception", None) or getattr(err, "_origin", None)
    if throwable is None:  # PySpark's own, raised in Python
        return None
    said = throwable
    while said is not None and str(said.getClass().getName()).startswith(_WRAPPERS):
        said = said.getCause()
    if said is None:
        said = throwable
    line = str(said.toString()).strip().splitlines()[0]
    return JobError(str(said.getClass().getSimpleName()), line, JVM_FAILURE_HINT)


def _session(request: JobRequest) -> Any:
    from hudi_bucket.spark.session import build_session

    return build_session(f"hudi-bucket-job {request.kind}", request.master or None)


def _context(spark: Any, request: JobRequest) -> Any:
    from hudi_bucket.spark.context import TableContext

    return TableContext.open(
        spark, request.table, hash_fields=request.hash_fields, key_style=request.key_style
    )


def _write_report(uri: str, report: JobReport, spark: Any) -> None:
    if ConfigMapReport.is_named_by(uri):  # a SparkApplication's report, for the operator
        from hudi_bucket.report_sink import write_configmap_report

        write_configmap_report(uri, report.to_json())
        return
    from hudi_bucket.storage import storage_for

    folder, _, name = uri.rstrip("/").rpartition("/")
    storage_for(folder or ".", spark).write(name, report.to_json(), overwrite=True)


@dataclass(frozen=True)
class CommandResult:
    """What a command did: its outcome and one line saying so, its typed result (the report's
    ``result``), and for plan and apply the table's buckets after the run."""

    outcome: Outcome
    message: str
    result: ReportedResult
    table_buckets: TableBuckets | None = None
    text: str | None = None  # printed instead of the report, for people (show --format text)


def _show(spark: Any, request: ShowRequest) -> CommandResult:
    from hudi_bucket.commands.show import render_text, show

    result = show(_context(spark, request), request.sizing)
    text = render_text(result) if request.format is ShowFormat.TEXT else None
    return CommandResult(Outcome.SUCCEEDED, f"{len(result.partitions)} partition(s)", result, text=text)


def _plan(spark: Any, request: PlanRequest) -> CommandResult:
    from hudi_bucket.commands.plan import plan

    ctx = _context(spark, request)
    message, result = plan(ctx, request.rescale)
    return CommandResult(Outcome.SUCCEEDED, message, result, _table_buckets(ctx))


def _apply(spark: Any, request: ApplyRequest) -> CommandResult:
    from hudi_bucket.commands.apply import apply

    ctx = _context(spark, request)
    result = apply(ctx, request.rescale)
    table_buckets = _table_buckets(ctx.reload())
    if result.instant is None:
        return CommandResult(Outcome.NO_CHANGE, "already converged: nothing written", result, table_buckets)
    message = (
        f"committed {result.instant}: {result.plan.partitions} partition(s) rewritten, "
        f"{result.rows_written} row(s) in {result.files_written} file(s)"
    )
    if result.partitions_repaired:
        message += (
            f"; {result.partitions_repaired} partition(s) repaired, {result.duplicates_resolved} key(s) "
            "held by two file groups kept one copy"
        )
    elif result.duplicates_resolved:
        message += f"; {result.duplicates_resolved} key(s) found more than once kept one copy"
    return CommandResult(Outcome.SUCCEEDED, message, result, table_buckets)


def _table_buckets(ctx: Any) -> TableBuckets:
    """The config in force and the partitions' bucket counts, which the operator puts in the status."""
    from hudi_bucket.hudi.fs_view import bucket_counts

    return TableBuckets.of(*bucket_counts(ctx.storage, ctx.table, ctx.matcher))


def _rollback(spark: Any, request: RollbackRequest) -> CommandResult:
    from hudi_bucket.commands.rollback import rollback

    result = rollback(_context(spark, request), request.instant)
    return CommandResult(Outcome.SUCCEEDED, f"rolled back {request.instant}", result)


def _verify(spark: Any, request: VerifyRequest) -> CommandResult:
    from hudi_bucket.commands.verify import verify

    result = verify(_context(spark, request))
    unread = result.unread_log_files
    message = f"{result.checked_rows} row(s) in {result.checked_file_groups} file group(s) ok"
    if unread:
        message += (
            f"; the records of {unread} log file(s) were not read (run with Hudi's bundle, "
            f"{HUDI_BUNDLE_ENV}, or compact the table to check them)"
        )
    return CommandResult(Outcome.SUCCEEDED, message, result)


def _write(spark: Any, request: WriteRequest) -> CommandResult:
    from hudi_bucket.commands.write import write

    result = write(spark, request.table, request.write)
    message = f"committed {result.instant}: {result.rows_written} row(s) in {result.files_written} file(s)"
    return CommandResult(Outcome.SUCCEEDED, message, result)


COMMANDS: dict[JobKind, Callable[[Any, Any], CommandResult]] = {
    JobKind.SHOW: _show,
    JobKind.PLAN: _plan,
    JobKind.APPLY: _apply,
    JobKind.VERIFY: _verify,
    JobKind.ROLLBACK: _rollback,
    JobKind.WRITE: _write,
}
