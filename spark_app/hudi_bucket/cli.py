"""`hudi-bucket-job <command> --table URI [options]`: what every SparkApplication (and the local mode) runs.

Argument parsing lives here; each command is a typed function in ``hudi_bucket.jobs``. Exit codes are
decided in one place (``main``): 0 done, 1 refused or failed (one line on stderr says why and what to do),
2 bad usage. With ``--report URI`` the JSON report is written whatever the outcome.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from hudi_bucket.core.recordkeys import KeyStyle
from hudi_bucket.core.report import JobReport, Outcome, error_doc, now_iso
from hudi_bucket.errors import HudiBucketError, LayoutViolationError, NotBucketIndexedError

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _table_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--table", required=True, help="table base URI (a local path, file://, s3a://, hdfs://, ...)"
    )
    parser.add_argument("--report", help="write the JSON report here (a path or URI)")
    parser.add_argument("--master", help="Spark master (default: as configured, else local[*])")
    parser.add_argument(
        "--hash-fields",
        default="",
        help="index key fields (hoodie.bucket.index.hash.field); default: the record key",
    )
    parser.add_argument(
        "--key-style",
        choices=[s.name for s in KeyStyle],
        help="how record keys were split into index keys (default: HUDI_0X for table version 6, else HUDI_1X)",
    )


def _rule_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--expressions", required=True, help="rules as Hudi writes them: 'regex,N;regex,N'")
    parser.add_argument(
        "--default", type=int, required=True, help="bucket count of partitions no rule matches"
    )
    parser.add_argument("--rule", default="regex", help="rule engine (Hudi has only 'regex')")
    parser.add_argument(
        "--current-buckets", type=int, help="old bucket count when upgrading a plain bucket-index table"
    )
    parser.add_argument(
        "--convert", action="store_true", help="lay out a table that is not bucket-indexed yet"
    )
    parser.add_argument(
        "--disable-metadata-table",
        action="store_true",
        help="remove a live metadata table the way Hudi does (it would go stale otherwise)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hudi-bucket-job", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    show = commands.add_parser(
        "show", help="table facts, config history, each partition's buckets and layout"
    )
    _table_options(show)

    plan = commands.add_parser("plan", help="what apply would do; writes nothing")
    _table_options(plan)
    _rule_options(plan)

    apply = commands.add_parser(
        "apply", help="commit the rules: rescale the partitions whose bucket count changes"
    )
    _table_options(apply)
    _rule_options(apply)
    apply.add_argument("--approved-plan", help="apply only if the plan's id is this one (plan-then-approve)")
    apply.add_argument("--full-shuffle", action="store_true", help="never take the shuffle-free path")

    rollback = commands.add_parser("rollback", help="undo one of our rescales that nothing newer depends on")
    _table_options(rollback)
    rollback.add_argument("--instant", required=True)

    verify = commands.add_parser("verify", help="check every partition's bucket layout; exit 1 on violations")
    _table_options(verify)

    write = commands.add_parser("write", help="insert/upsert a dataset into a bucket-indexed COW table")
    _table_options(write)
    write.add_argument("--source", required=True, help="dataset URI")
    write.add_argument("--format", choices=["parquet", "csv", "json"], default="parquet")
    write.add_argument("--operation", choices=["insert", "upsert"], default="upsert")
    write.add_argument("--record-key", required=True, help="record key field(s), comma-separated")
    write.add_argument("--partition-field", default="", help="partition field(s), comma-separated")
    write.add_argument("--ordering-field", default="", help="field that decides which duplicate wins")
    write.add_argument("--create", action="store_true", help="create the table when it does not exist")
    write.add_argument("--table-name", help="name of a table created by --create (default: the folder name)")
    write.add_argument("--table-version", type=int, choices=[8, 9], default=9)
    write.add_argument("--hive-style", action="store_true", help="name partition folders field=value")
    write.add_argument(
        "--url-encode-partitions",
        action="store_true",
        help="escape partition values in paths as Hudi's partitionpath.urlencode does (needed for ':')",
    )
    write.add_argument("--expressions", default="", help="rules of a table created by --create")
    write.add_argument(
        "--default",
        type=int,
        help="bucket count of a table without rules (default: the table's own; 4 when created)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    started = now_iso()
    spark = None
    try:
        spark = _session(args)
        outcome, message, result = COMMANDS[args.command](spark, args)
        report = JobReport(args.command, args.table, outcome, message, started, now_iso(), result)
    except HudiBucketError as err:
        report = JobReport(
            args.command, args.table, Outcome.FAILED, str(err), started, now_iso(), error=error_doc(err)
        )
    if args.report:
        try:
            _write_report(args.report, report, spark)
        except HudiBucketError as err:
            print(f"hudi-bucket-job {args.command}: could not write the report: {err}", file=sys.stderr)
            return EXIT_FAILED
    if report.outcome is Outcome.FAILED:
        print(f"hudi-bucket-job {args.command}: {report.message}", file=sys.stderr)
        return EXIT_FAILED
    print(json.dumps(report.to_dict(), indent=2))
    return EXIT_OK


def _session(args: argparse.Namespace) -> Any:
    from hudi_bucket.jobs.session import build_session

    return build_session(f"hudi-bucket-job {args.command}", args.master)


def _context(spark: Any, args: argparse.Namespace) -> Any:
    from hudi_bucket.jobs.context import TableContext

    fields = tuple(f.strip() for f in args.hash_fields.split(",") if f.strip())
    style = KeyStyle[args.key_style] if args.key_style else None
    return TableContext.open(spark, args.table, hash_fields=fields, key_style=style)


def _write_report(uri: str, report: JobReport, spark: Any) -> None:
    if uri.startswith("configmap://"):  # a SparkApplication's report, for the operator
        from hudi_bucket.report_sink import write_configmap_report

        write_configmap_report(uri, report.to_json())
        return
    from hudi_bucket.storage import storage_for

    folder, _, name = uri.rstrip("/").rpartition("/")
    storage_for(folder or ".", spark).write(name, report.to_json(), overwrite=True)


CommandResult = tuple[Outcome, str, dict[str, Any]]


def _show(spark: Any, args: argparse.Namespace) -> CommandResult:
    from hudi_bucket.jobs.show import show

    result = show(_context(spark, args))
    return Outcome.SUCCEEDED, f"{len(result['partitions'])} partition(s)", result


def _request(args: argparse.Namespace) -> Any:
    from hudi_bucket.core.rules import BucketRules
    from hudi_bucket.jobs.apply import RescaleRequest

    return RescaleRequest(
        desired=BucketRules.parse(args.expressions, args.default, args.rule),
        current_buckets=args.current_buckets,
        convert=args.convert,
        disable_metadata_table=args.disable_metadata_table,
        approved_plan=getattr(args, "approved_plan", None),
        full_shuffle=getattr(args, "full_shuffle", False),
    )


def _plan(spark: Any, args: argparse.Namespace) -> CommandResult:
    from hudi_bucket.jobs.apply import plan
    from hudi_bucket.jobs.show import table_buckets

    ctx = _context(spark, args)
    the_plan, checks = plan(ctx, _request(args))
    totals = the_plan.totals()
    message = (
        "already converged: nothing to do"
        if the_plan.is_noop
        else f"plan {the_plan.plan_id}: rewrite {totals['partitions']} partition(s), {totals['rows']} row(s)"
        + (", new config version" if the_plan.config_changes else "")
    )
    return (
        Outcome.SUCCEEDED,
        message,
        {"plan": the_plan.to_dict(), "preflight": checks.to_dict(), **table_buckets(ctx)},
    )


def _apply(spark: Any, args: argparse.Namespace) -> CommandResult:
    from hudi_bucket.jobs.apply import apply
    from hudi_bucket.jobs.show import table_buckets

    ctx = _context(spark, args)
    result = apply(ctx, _request(args))
    facts = table_buckets(ctx.reload())
    if result.instant is None:
        return Outcome.NO_CHANGE, "already converged: nothing written", {**result.to_dict(), **facts}
    message = (
        f"committed {result.instant}: {len(result.plan.changes)} partition(s) rewritten, "
        f"{result.rows_written} row(s) in {result.files_written} file(s)"
    )
    return Outcome.SUCCEEDED, message, {**result.to_dict(), **facts}


def _rollback(spark: Any, args: argparse.Namespace) -> CommandResult:
    from hudi_bucket.hudi.rollback import rollback
    from hudi_bucket.jobs.preconditions import refuse_live

    ctx = _context(spark, args)
    refuse_live(ctx, [args.instant])  # a live job's instant is not ours to undo from under it
    result = rollback(ctx.storage, ctx.table, args.instant)
    return Outcome.SUCCEEDED, f"rolled back {args.instant}", result.to_dict()


def _verify(spark: Any, args: argparse.Namespace) -> CommandResult:
    from hudi_bucket.hudi import config_store
    from hudi_bucket.jobs.verify import verify_table

    ctx = _context(spark, args)
    in_force = config_store.load_in_force(ctx.storage, ctx.table.timeline.pending_replace_timestamps())
    if in_force is None:
        raise NotBucketIndexedError(
            f"{ctx.table.uri} has no hashing_config: there is no bucket count to verify against",
            hint="apply rules first (hudi-bucket-job apply ... --convert for a table that is not bucket-indexed)",
        )
    rules, matcher = in_force.to_rules(), ctx.matcher
    result = verify_table(
        spark,
        ctx.storage,
        ctx.table,
        rules_for_partition=lambda partition: rules.buckets_for(partition, matcher),
        hash_fields=ctx.hash_fields,
        key_style=ctx.key_style,
    )
    if not result.ok:
        raise LayoutViolationError(
            f"{len(result.violations)} bucket layout violation(s)", result=result.to_dict()
        )
    return (
        Outcome.SUCCEEDED,
        f"{result.checked_rows} row(s) in {result.checked_file_groups} file group(s) ok",
        result.to_dict(),
    )


def _write(spark: Any, args: argparse.Namespace) -> CommandResult:
    from hudi_bucket.jobs.write import WriteRequest, write

    def fields(text: str) -> tuple[str, ...]:
        return tuple(f.strip() for f in text.split(",") if f.strip())

    request = WriteRequest(
        source=args.source,
        format=args.format,
        operation=args.operation,
        record_key=fields(args.record_key),
        partition_fields=fields(args.partition_field),
        ordering_field=args.ordering_field,
        create=args.create,
        table_name=args.table_name,
        table_version=args.table_version,
        hive_style=args.hive_style,
        url_encode_partitions=args.url_encode_partitions,
        expressions=args.expressions,
        default_buckets=args.default,
    )
    result = write(spark, args.table, request)
    message = f"committed {result.instant}: {result.rows_written} row(s) in {result.files_written} file(s)"
    return Outcome.SUCCEEDED, message, result.to_dict()


COMMANDS: dict[str, Callable[[Any, argparse.Namespace], CommandResult]] = {
    "write": _write,
    "show": _show,
    "plan": _plan,
    "apply": _apply,
    "rollback": _rollback,
    "verify": _verify,
}
