"""What a `hudi-bucket-job` run is asked to do: one typed request per job kind, and its command line.

The operator builds requests (the SparkApplication's arguments, the local backend's process), the job
parses them back (``build_parser`` and ``request_from``), and the jobs take their option dataclasses
(``RescaleOptions``, ``ApplyOptions``, ``WriteOptions``). ``to_argv`` and ``from_args`` are two
readings of the same option list, so what one side writes the other reads.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar, Self

from hudi_bucket.contract.options import (
    Group,
    Option,
    Rules,
    Sizing,
    Switch,
    Value,
    argv_of,
    names_option,
    values_of,
)
from hudi_bucket.core.engine import Engine
from hudi_bucket.core.recordkeys import KeyStyle
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.core.sizing import SizingPolicy

PROG = "hudi-bucket-job"
# The job's environment names Apache Hudi's Spark bundle here (the job image sets it; locally `./dev
# hudi-bundle` prints the path): the Hudi engine runs on it, and verify reads log files through it.
HUDI_BUNDLE_ENV = "HBO_HUDI_BUNDLE"
# And the jobs' own JVM classes here (the job image sets it; locally `./dev jvm-jar` prints the path):
# with them, bucket files are written at their final names (writing.direct_write), without them staged and
# moved into place.
JVM_JAR_ENV = "HBO_JVM_JAR"


class JobKind(StrEnum):
    """The job's command: the first argument of its command line, and the job-kind label in a cluster."""

    SHOW = "show"
    PLAN = "plan"
    APPLY = "apply"
    VERIFY = "verify"
    ROLLBACK = "rollback"
    WRITE = "write"


@dataclass(frozen=True)
class RescaleOptions:
    """What ``plan`` takes: the rules, how to onboard a table that has no bucket config yet, and the
    sizing policy whose rules follow the explicit ones."""

    rules: BucketRules
    current_buckets: int | None = None  # a plain bucket-index table's N
    convert: bool = False  # lay out a table that is not bucket-indexed yet
    disable_metadata_table: bool = False
    engine: Engine = Engine.AUTO  # who rewrites: see core.engine
    sizing: SizingPolicy | None = None  # None: the rules as given, no sizing
    check_records: bool = False  # also read every record's key: repair partitions with misplaced records
    keep_duplicates: bool = False  # a conversion carries every copy of a key over (default: one copy)

    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Rules(),
        Sizing(),
        Value(
            "--current-buckets",
            "current_buckets",
            "old bucket count when upgrading a plain bucket-index table",
            parse=int,
        ),
        Switch("--convert", "convert", "lay out a table that is not bucket-indexed yet"),
        Switch(
            "--disable-metadata-table",
            "disable_metadata_table",
            "remove a live metadata table the way Hudi does (it would go stale otherwise)",
        ),
        Value(
            "--engine",
            "engine",
            "who rewrites: Native (this tool), Hudi (Hudi's procedure; its bundle on the classpath) or "
            "Auto (Native unless the table has a live metadata table)",
            parse=Engine,
            render=lambda engine: engine.value,
            choices=tuple(Engine),
            metavar="{" + ",".join(engine.value for engine in Engine) + "}",
        ),
        Switch(
            "--check-records",
            "check_records",
            "check every record's bucket as verify does (reads every key) and repair the partitions "
            "with misplaced records or a key in two file groups",
        ),
        Switch(
            "--keep-duplicates",
            "keep_duplicates",
            "in a conversion, carry every copy of a key found more than once in a partition over "
            "(default: keep the one Hudi's merge keeps)",
        ),
    )


@dataclass(frozen=True)
class ApplyOptions(RescaleOptions):
    """What ``apply`` takes: plan's options, the plan approved (if any) and the shuffle choice."""

    approved_plan: str = ""  # apply only if the plan's id is this one
    full_shuffle: bool = False  # never take the shuffle-free path

    OPTIONS: ClassVar[tuple[Option, ...]] = (
        *RescaleOptions.OPTIONS,
        Value(
            "--approved-plan", "approved_plan", "apply only if the plan's id is this one (plan-then-approve)"
        ),
        Switch("--full-shuffle", "full_shuffle", "never take the shuffle-free path"),
    )


@dataclass(frozen=True)
class WriteOptions:
    """What ``write`` takes: the dataset, how its records are keyed, and how a new table is made."""

    source: str
    format: str = "parquet"
    operation: str = "upsert"
    record_key: tuple[str, ...] = ()
    partition_fields: tuple[str, ...] = ()
    ordering_field: str = ""
    create: bool = False
    table_name: str = ""  # a created table's name; "" for its folder's name
    table_version: int = 9
    hive_style: bool = False
    url_encode_partitions: bool = False  # of a created table: Hudi's partitionpath.urlencode
    expressions: str = ""  # rules of a created table
    default_buckets: int | None = None  # None: the table's own (a created table's: see commands.write)

    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Value("--source", "source", "dataset URI", required=True),
        Value("--format", "format", "the dataset's format", choices=("parquet", "csv", "json")),
        Value("--operation", "operation", "how records meet the table's", choices=("insert", "upsert")),
        names_option("--record-key", "record_key", "record key field(s)", required=True),
        names_option("--partition-field", "partition_fields", "partition field(s)"),
        Value("--ordering-field", "ordering_field", "field that decides which duplicate wins"),
        Switch("--create", "create", "create the table when it does not exist"),
        Value("--table-name", "table_name", "name of a table created by --create (default: the folder name)"),
        Value("--table-version", "table_version", "version of a created table", parse=int, choices=(8, 9)),
        Switch("--hive-style", "hive_style", "name partition folders field=value"),
        Switch(
            "--url-encode-partitions",
            "url_encode_partitions",
            "escape partition values in paths as Hudi's partitionpath.urlencode does (needed for ':')",
        ),
        Value("--expressions", "expressions", "rules of a table created by --create"),
        Value(
            "--default",
            "default_buckets",
            "bucket count of a table without rules (default: the table's own; 4 when created)",
            parse=int,
        ),
    )

    @property
    def is_upsert(self) -> bool:
        return self.operation == "upsert"


def _key_style(name: str) -> KeyStyle:
    try:
        return KeyStyle[name]
    except KeyError:
        raise ValueError(name) from None


@dataclass(frozen=True, kw_only=True)
class JobRequest:
    """What every job takes: the table, how its record keys hash, where the report goes."""

    kind: ClassVar[JobKind]
    summary: ClassVar[str]  # the command's one-line help
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Value(
            "--table", "table", "table base URI (a local path, file://, s3a://, hdfs://, ...)", required=True
        ),
        Value("--report", "report", "write the JSON report here (a path, a storage URI or configmap://...)"),
        Value("--master", "master", "Spark master (default: as configured, else local[*])"),
        names_option(
            "--hash-fields",
            "hash_fields",
            "index key fields (hoodie.bucket.index.hash.field); default: the record key",
        ),
        Value(
            "--key-style",
            "key_style",
            "how record keys were split into index keys (default: HUDI_0X for table version 6, else HUDI_1X)",
            parse=_key_style,
            render=lambda style: style.name,
            metavar="{" + ",".join(style.name for style in KeyStyle) + "}",
        ),
    )

    table: str
    report: str = ""
    master: str = ""
    hash_fields: tuple[str, ...] = ()
    key_style: KeyStyle | None = None

    def to_argv(self) -> list[str]:
        """The job's command line (after the program name)."""
        return [self.kind.value, *argv_of(self, self.OPTIONS)]

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        for option in cls.OPTIONS:
            option.add_to(parser)

    @classmethod
    def from_args(cls, namespace: argparse.Namespace) -> Self:
        """The request a parsed command line holds; InvalidRuleError if its rules are not Hudi's."""
        return cls(**values_of(namespace, cls.OPTIONS))


class ShowFormat(StrEnum):
    TEXT = "text"  # a table for people
    JSON = "json"  # the report, for tools


@dataclass(frozen=True, kw_only=True)
class ShowRequest(JobRequest):
    kind = JobKind.SHOW
    summary = "table facts, config history, each partition's buckets, layout and file sizes"
    OPTIONS = (
        *JobRequest.OPTIONS,
        Sizing(),
        Value(
            "--format",
            "format",
            "text for people, json (the report) for tools",
            parse=ShowFormat,
            choices=tuple(ShowFormat),
        ),
    )

    sizing: SizingPolicy | None = None  # also show what sizing would propose
    format: ShowFormat = ShowFormat.TEXT


@dataclass(frozen=True, kw_only=True)
class PlanRequest(JobRequest):
    kind = JobKind.PLAN
    summary = "what apply would do; writes nothing"
    OPTIONS = (*JobRequest.OPTIONS, Group("rescale", RescaleOptions, RescaleOptions.OPTIONS))

    rescale: RescaleOptions


@dataclass(frozen=True, kw_only=True)
class ApplyRequest(JobRequest):
    kind = JobKind.APPLY
    summary = "commit the rules: rescale the partitions whose bucket count changes"
    OPTIONS = (*JobRequest.OPTIONS, Group("rescale", ApplyOptions, ApplyOptions.OPTIONS))

    rescale: ApplyOptions


@dataclass(frozen=True, kw_only=True)
class VerifyRequest(JobRequest):
    kind = JobKind.VERIFY
    summary = "check every partition's bucket layout; exit 1 on violations"


@dataclass(frozen=True, kw_only=True)
class RollbackRequest(JobRequest):
    kind = JobKind.ROLLBACK
    summary = "undo one of our rescales that nothing newer depends on"
    OPTIONS = (*JobRequest.OPTIONS, Value("--instant", "instant", "the instant to undo", required=True))

    instant: str


@dataclass(frozen=True, kw_only=True)
class WriteRequest(JobRequest):
    kind = JobKind.WRITE
    summary = "insert/upsert a dataset into a bucket-indexed COW table"
    OPTIONS = (*JobRequest.OPTIONS, Group("write", WriteOptions, WriteOptions.OPTIONS))

    write: WriteOptions


REQUESTS: dict[JobKind, type[JobRequest]] = {
    request.kind: request
    for request in (ShowRequest, PlanRequest, ApplyRequest, VerifyRequest, RollbackRequest, WriteRequest)
}


def build_parser(description: str = "") -> argparse.ArgumentParser:
    """`hudi-bucket-job`'s parser: one sub-command per job kind."""
    parser = argparse.ArgumentParser(prog=PROG, description=description)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for kind, request in REQUESTS.items():
        request.add_arguments(commands.add_parser(kind.value, help=request.summary))
    return parser


def request_from(namespace: argparse.Namespace) -> JobRequest:
    """The request a parsed command line holds (see ``JobRequest.from_args``)."""
    return REQUESTS[JobKind(namespace.command)].from_args(namespace)


def parse_argv(argv: Sequence[str]) -> JobRequest:
    """``request_from(build_parser().parse_args(argv))``: what the job makes of an argument list."""
    return request_from(build_parser().parse_args(argv))
