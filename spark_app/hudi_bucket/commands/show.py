"""`show`: a table's facts, its hashing_config history, and each partition's bucket count beside its
actual layout and file sizes, and each file group's latest file slice (its base file and, on
MERGE_ON_READ, its log files); with a sizing policy, what sizing would propose. Reads only metadata: row
counts come from the commits that wrote each base file, sizes from the listing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import Annotated, Literal, Self

from pydantic import Field
from pydantic import dataclasses as pydantic_dataclasses

from hudi_bucket.core.buckets import bucket_id_from_file_id, is_bucket_file_id
from hudi_bucket.core.filegroups import FileGroup, FileSlice
from hudi_bucket.core.hashing_config import HashingConfig
from hudi_bucket.core.report_json import REPORT_JSON, ReportJson
from hudi_bucket.core.rules import BucketRules, Matcher
from hudi_bucket.core.sizing import (
    ReportedChoice,
    ReportedSizing,
    Sizing,
    SizingPolicy,
    Verdict,
    choose_all,
    format_size,
    measure,
    size_table,
)
from hudi_bucket.errors import SizingError
from hudi_bucket.hudi import config_store
from hudi_bucket.hudi.fs_view import load_file_groups, rows_by_base_file
from hudi_bucket.hudi.table import HudiTable
from hudi_bucket.spark.context import TableContext
from hudi_bucket.storage.base import Storage

# What show's JSON is made of: pydantic dataclasses whose fields are its keys (camelCase, as the report's;
# a hashing_config keeps its own field names, as Hudi's file has them).


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class PendingInstant:
    instant: str
    action: str
    state: str


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class TableFacts:
    uri: str
    name: str
    type: str
    version: int
    timeline_layout: int
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...]
    hive_style_partitioning: bool
    hash_fields: tuple[str, ...]
    key_style: str
    metadata_table: Literal["live", "present", "off"]
    latest_instant: str | None
    pending_instants: tuple[PendingInstant, ...]


@pydantic_dataclasses.dataclass(frozen=True)
class ShownConfig(HashingConfig):
    """A hashing_config version, its fields named as in Hudi's file (its own config: not camelCase)."""

    @classmethod
    def of(cls, config: HashingConfig) -> Self:
        return cls(**asdict(config))


@pydantic_dataclasses.dataclass(frozen=True)
class ShownConfigVersion(ShownConfig):
    """A version of the config history: archived or not, and whether its replacecommit is pending."""

    archived: bool = False
    pending: bool = False


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class BucketIds:
    count: int
    min: int
    max: int


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class BaseFileShown:
    name: str
    size: int
    rows: int | None  # None: its commit does not say


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class LogFileShown:
    name: str
    size: int


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class FileSliceShown:
    """A file group's latest file slice."""

    file_id: str
    bucket: int | None  # None: the file id is no bucket's
    base_instant: str
    base_file: BaseFileShown | None
    log_files: tuple[LogFileShown, ...]


Layout = Literal["empty", "not-bucketed", "violates", "ok"]


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class PartitionShown:
    partition: str
    buckets: int | None  # under the config in force; None: none in force
    file_groups: int
    bucket_ids: BucketIds | None
    layout: Layout
    rows: int | None  # None: some base file's commit does not say
    bytes: int
    # The size distribution: what a target file size is compared with. Log files count on
    # MERGE_ON_READ, where compaction folds them into the base files.
    live_bytes: int
    bytes_per_bucket: int | None
    smallest_file: int | None
    largest_file: int | None
    file_slices: tuple[FileSliceShown, ...]


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class ShowResult(ReportJson):
    """What ``show`` found, for people: the report's ``result`` (no ``sizing`` key unless asked)."""

    table: TableFacts
    config: ShownConfig | None  # the config in force
    config_history: tuple[ShownConfigVersion, ...]
    partitions: tuple[PartitionShown, ...]
    # What sizing would propose, when asked.
    sizing: Annotated[ReportedSizing | None, Field(exclude_if=lambda sizing: sizing is None)] = None


def show(ctx: TableContext, sizing: SizingPolicy | None = None) -> ShowResult:
    table, storage = ctx.table, ctx.storage
    in_force = config_store.load_in_force(storage, table.timeline.pending_replace_timestamps())
    rules = in_force.to_rules() if in_force else None
    groups = load_file_groups(storage, table)
    rows = rows_by_base_file(storage, table)
    return ShowResult(
        table_facts(table, ctx),
        None if in_force is None else ShownConfig.of(in_force),
        config_history(storage, table),
        tuple(partition_doc(p, gs, rules, ctx.matcher, rows) for p, gs in sorted(groups.items())),
        None if sizing is None else proposal(groups, rules, sizing, ctx.matcher),
    )


def proposal(
    groups: dict[str, tuple[FileGroup, ...]],
    rules: BucketRules | None,
    sizing: SizingPolicy,
    matcher: Matcher,
) -> ReportedSizing:
    """What sizing would make of every partition, with no explicit rules: the counts and their rules
    (after the default in force; with none in force, every count gets a rule)."""
    default = rules.default if rules else 0
    sizes = [measure(p, rules.buckets_for(p, matcher) if rules else None, gs) for p, gs in groups.items()]
    try:
        return size_table(sizes, BucketRules((), default), sizing, matcher).reported()
    except SizingError as error:  # too many rules: still show each partition's count
        choices = choose_all(sizes, BucketRules((), default), sizing, matcher)
        shown = Sizing(sizing, choices, (), BucketRules((), default)).reported()
        return replace(shown, rules=None, problem=f"{error} ({error.hint})")


def table_facts(table: HudiTable, ctx: TableContext) -> TableFacts:
    latest = table.timeline.latest_completed
    return TableFacts(
        uri=table.uri,
        name=table.name,
        type=table.config.table_type,
        version=table.version,
        timeline_layout=int(table.layout),
        record_key_fields=tuple(table.config.record_key_fields),
        partition_fields=tuple(table.config.partition_fields),
        hive_style_partitioning=table.config.hive_style_partitioning,
        hash_fields=tuple(ctx.hash_fields),
        key_style=ctx.key_style.name,
        metadata_table="live"
        if table.metadata_table_live
        else ("present" if table.metadata_table_exists else "off"),
        latest_instant=latest.timestamp if latest else None,
        pending_instants=tuple(
            PendingInstant(i.timestamp, i.action.value, i.state.name) for i in table.timeline.pending()
        ),
    )


def config_history(storage: Storage, table: HudiTable) -> tuple[ShownConfigVersion, ...]:
    pending = table.timeline.pending_replace_timestamps()
    history = []
    for archived in (True, False):
        for instant in config_store.list_instants(storage, archived=archived):
            config = config_store.read_config(storage, instant, archived=archived)
            history.append(
                replace(ShownConfigVersion.of(config), archived=archived, pending=instant in pending)
            )
    return tuple(history)


def partition_doc(
    partition: str,
    groups: tuple[FileGroup, ...],
    rules: BucketRules | None,
    matcher: Matcher,
    rows: dict[str, int],
) -> PartitionShown:
    bases = [g.latest_base_file for g in groups if g.latest_base_file]
    known = [rows.get(b.path) for b in bases]
    buckets = rules.buckets_for(partition, matcher) if rules else None
    ids = [bucket_id_from_file_id(g.file_id) for g in groups if is_bucket_file_id(g.file_id)]
    size = measure(partition, buckets, groups)
    return PartitionShown(
        partition=partition,
        buckets=buckets,
        file_groups=len(groups),
        bucket_ids=summarize_ids(ids),
        layout=layout_state(len(groups), ids, buckets),
        rows=sum(r for r in known if r is not None) if all(r is not None for r in known) else None,
        bytes=sum(b.size for b in bases),
        live_bytes=size.bytes,
        bytes_per_bucket=size.bytes // len(groups) if groups else None,
        smallest_file=size.smallest_file,
        largest_file=size.largest_file,
        file_slices=tuple(slice_doc(g, rows) for g in sorted(groups, key=_by_bucket)),
    )


def slice_doc(group: FileGroup, rows: dict[str, int]) -> FileSliceShown:
    """A file group's latest file slice: its base file (rows when its commit says) and its log files."""
    latest = group.latest_slice() or FileSlice(group.partition, group.file_id, "")
    base = latest.base_file
    return FileSliceShown(
        file_id=group.file_id,
        bucket=bucket_id_from_file_id(group.file_id) if is_bucket_file_id(group.file_id) else None,
        base_instant=latest.base_instant,
        base_file=None if base is None else BaseFileShown(base.file_name, base.size, rows.get(base.path)),
        log_files=tuple(LogFileShown(log.file_name, log.size) for log in latest.log_files),
    )


def _by_bucket(group: FileGroup) -> tuple[int, str]:
    return (bucket_id_from_file_id(group.file_id) if is_bucket_file_id(group.file_id) else -1, group.file_id)


def summarize_ids(ids: list[int]) -> BucketIds | None:
    return BucketIds(len(ids), min(ids), max(ids)) if ids else None


def layout_state(file_groups: int, ids: list[int], buckets: int | None) -> Layout:
    """``empty``, ``not-bucketed`` (file ids are not bucket ids), ``violates`` (duplicate ids or ids out
    of range), or ``ok``."""
    if file_groups == 0:
        return "empty"
    if len(ids) < file_groups:
        return "not-bucketed"
    if len(set(ids)) < len(ids) or (buckets is not None and max(ids) >= buckets):
        return "violates"
    return "ok"


# --- for people -------------------------------------------------------------------------------------


def render_text(result: ShowResult) -> str:
    """``show``'s result as a table, and sizing's proposal below it."""
    facts, config = result.table, result.config
    lines = [
        f"table {facts.uri} ({facts.name}, {facts.type}, version {facts.version})",
        "config: none (a plain bucket index, or not bucket-indexed)"
        if config is None
        else f"config {config.instant}: default {config.default_bucket_number}, "
        f"rules {config.expressions or '(none)'}",
        "",
    ]
    proposed = {c.partition: c for c in (result.sizing.choices if result.sizing else ())}
    header = ["partition", "buckets", "groups", "rows", "bytes", "per bucket", "smallest", "largest"]
    if proposed:
        header.append("sizing")
    table = [header]
    for p in result.partitions:
        row = [
            p.partition or "(table)",
            _text(p.buckets),
            str(p.file_groups),
            _text(p.rows),
            format_size(p.live_bytes),
            *(
                format_size(size) if size is not None else "-"
                for size in (p.bytes_per_bucket, p.smallest_file, p.largest_file)
            ),
        ]
        if proposed:
            row.append(_choice_text(proposed.get(p.partition)))
        table.append(row)
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        cells = [
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    sizing = result.sizing
    if sizing is not None:
        policy = sizing.policy
        lines += [
            "",
            f"sizing to {format_size(policy.target_file_size)} per file (tolerance {policy.tolerance:g}x, "
            f"{policy.min_buckets}..{policy.max_buckets} buckets): {sizing.resized} of "
            f"{sizing.sized_partitions} partition(s) to rewrite, {sizing.shuffle_free} of them shuffle-free",
            *(f"  rule {r.pattern},{r.buckets}" for r in sizing.rules or ()),
        ]
        if sizing.problem:
            lines.append(f"  no rules: {sizing.problem}")
    lines += _files_text(result.partitions)
    return "\n".join(lines)


def _files_text(partitions: Sequence[PartitionShown]) -> list[str]:
    """Each partition's file groups, one per line (bucket, base file, size, rows), log files below theirs."""
    lines = ["", "latest file slice of each file group: bucket, base file, size, rows; log files below"]
    for p in partitions:
        lines.append(p.partition or "(table)")
        for s in p.file_slices:
            bucket = "-" if s.bucket is None else str(s.bucket)
            base = s.base_file
            if base is None:
                lines.append(f"  {bucket:>6}  (no base file: {s.file_id} has log files only)")
            else:
                lines.append(f"  {bucket:>6}  {base.name}  {format_size(base.size)}  {_text(base.rows)} rows")
            lines += [f"  {'':>6}    + {log.name}  {format_size(log.size)}" for log in s.log_files]
    return lines


def _text(value: object) -> str:
    return "-" if value is None else f"{value:,}" if isinstance(value, int) else str(value)


def _choice_text(choice: ReportedChoice | None) -> str:
    if choice is None:
        return "-"
    if choice.verdict is Verdict.KEEP:
        return "keep"
    return f"-> {choice.new_buckets}"
