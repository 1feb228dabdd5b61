"""`show`: a table's facts, its hashing_config history, and each partition's bucket count beside its
actual layout and file sizes, and each file group's latest file slice (its base file and, on
MERGE_ON_READ, its log files); with a sizing policy, what sizing would propose. Reads only metadata: row
counts come from the commits that wrote each base file, sizes from the listing."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from hudi_bucket.core.buckets import bucket_id_from_file_id, is_bucket_file_id
from hudi_bucket.core.filegroups import FileGroup, FileSlice
from hudi_bucket.core.hashing_config import HashingConfig
from hudi_bucket.core.rules import BucketRules, Matcher
from hudi_bucket.core.sizing import (
    Sizing,
    SizingPolicy,
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


@dataclass(frozen=True)
class ShowResult:
    """What ``show`` found, for people: each part is the JSON document the report shows (the parts are
    not typed further: no program reads them)."""

    table: dict[str, Any]
    config: dict[str, Any] | None  # the config in force
    config_history: list[dict[str, Any]]
    partitions: list[dict[str, Any]]
    sizing: dict[str, Any] | None = None  # what sizing would propose, when asked

    def to_dict(self) -> dict[str, Any]:
        shown = {
            "table": self.table,
            "config": self.config,
            "configHistory": self.config_history,
            "partitions": self.partitions,
        }
        return shown if self.sizing is None else {**shown, "sizing": self.sizing}


def show(ctx: TableContext, sizing: SizingPolicy | None = None) -> ShowResult:
    table, storage = ctx.table, ctx.storage
    in_force = config_store.load_in_force(storage, table.timeline.pending_replace_timestamps())
    rules = in_force.to_rules() if in_force else None
    groups = load_file_groups(storage, table)
    rows = rows_by_base_file(storage, table)
    return ShowResult(
        table_facts(table, ctx),
        config_doc(in_force),
        config_history(storage, table),
        [partition_doc(p, gs, rules, ctx.matcher, rows) for p, gs in sorted(groups.items())],
        None if sizing is None else proposal(groups, rules, sizing, ctx.matcher),
    )


def proposal(
    groups: dict[str, tuple[FileGroup, ...]],
    rules: BucketRules | None,
    sizing: SizingPolicy,
    matcher: Matcher,
) -> dict[str, Any]:
    """What sizing would make of every partition, with no explicit rules: the counts and their rules
    (after the default in force; with none in force, every count gets a rule)."""
    default = rules.default if rules else 0
    sizes = [measure(p, rules.buckets_for(p, matcher) if rules else None, gs) for p, gs in groups.items()]
    try:
        return size_table(sizes, BucketRules((), default), sizing, matcher).to_dict()
    except SizingError as error:  # too many rules: still show each partition's count
        choices = choose_all(sizes, BucketRules((), default), sizing, matcher)
        shown = Sizing(sizing, choices, (), BucketRules((), default)).to_dict()
        return {**shown, "rules": None, "problem": f"{error} ({error.hint})"}


def table_facts(table: HudiTable, ctx: TableContext) -> dict[str, Any]:
    latest = table.timeline.latest_completed
    return {
        "uri": table.uri,
        "name": table.name,
        "type": table.config.table_type,
        "version": table.version,
        "timelineLayout": int(table.layout),
        "recordKeyFields": list(table.config.record_key_fields),
        "partitionFields": list(table.config.partition_fields),
        "hiveStylePartitioning": table.config.hive_style_partitioning,
        "hashFields": list(ctx.hash_fields),
        "keyStyle": ctx.key_style.name,
        "metadataTable": "live"
        if table.metadata_table_live
        else ("present" if table.metadata_table_exists else "off"),
        "latestInstant": latest.timestamp if latest else None,
        "pendingInstants": [
            {"instant": i.timestamp, "action": i.action.value, "state": i.state.name}
            for i in table.timeline.pending()
        ],
    }


def config_doc(config: HashingConfig | None) -> dict[str, Any] | None:
    return asdict(config) if config else None


def config_history(storage: Storage, table: HudiTable) -> list[dict[str, Any]]:
    pending = table.timeline.pending_replace_timestamps()
    history = []
    for archived in (True, False):
        for instant in config_store.list_instants(storage, archived=archived):
            config = config_store.read_config(storage, instant, archived=archived)
            history.append({**asdict(config), "archived": archived, "pending": instant in pending})
    return history


def partition_doc(
    partition: str,
    groups: tuple[FileGroup, ...],
    rules: BucketRules | None,
    matcher: Matcher,
    rows: dict[str, int],
) -> dict[str, Any]:
    bases = [g.latest_base_file for g in groups if g.latest_base_file]
    known = [rows.get(b.path) for b in bases]
    buckets = rules.buckets_for(partition, matcher) if rules else None
    ids = [bucket_id_from_file_id(g.file_id) for g in groups if is_bucket_file_id(g.file_id)]
    size = measure(partition, buckets, groups)
    return {
        "partition": partition,
        "buckets": buckets,
        "fileGroups": len(groups),
        "bucketIds": summarize_ids(ids),
        "layout": layout_state(len(groups), ids, buckets),
        "rows": sum(r for r in known if r is not None) if all(r is not None for r in known) else None,
        "bytes": sum(b.size for b in bases),
        # The size distribution: what a target file size is compared with. Log files count on
        # MERGE_ON_READ, where compaction folds them into the base files.
        "liveBytes": size.bytes,
        "bytesPerBucket": size.bytes // len(groups) if groups else None,
        "smallestFile": size.smallest_file,
        "largestFile": size.largest_file,
        "fileSlices": [slice_doc(g, rows) for g in sorted(groups, key=_by_bucket)],
    }


def slice_doc(group: FileGroup, rows: dict[str, int]) -> dict[str, Any]:
    """A file group's latest file slice: its base file (rows when its commit says) and its log files."""
    latest = group.latest_slice() or FileSlice(group.partition, group.file_id, "")
    base = latest.base_file
    return {
        "fileId": group.file_id,
        "bucket": bucket_id_from_file_id(group.file_id) if is_bucket_file_id(group.file_id) else None,
        "baseInstant": latest.base_instant,
        "baseFile": {"name": base.file_name, "size": base.size, "rows": rows.get(base.path)}
        if base
        else None,
        "logFiles": [{"name": log.file_name, "size": log.size} for log in latest.log_files],
    }


def _by_bucket(group: FileGroup) -> tuple[int, str]:
    return (bucket_id_from_file_id(group.file_id) if is_bucket_file_id(group.file_id) else -1, group.file_id)


def summarize_ids(ids: list[int]) -> dict[str, int] | None:
    return {"count": len(ids), "min": min(ids), "max": max(ids)} if ids else None


def layout_state(file_groups: int, ids: list[int], buckets: int | None) -> str:
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
        f"table {facts['uri']} ({facts['name']}, {facts['type']}, version {facts['version']})",
        "config: none (a plain bucket index, or not bucket-indexed)"
        if config is None
        else f"config {config['instant']}: default {config['default_bucket_number']}, "
        f"rules {config['expressions'] or '(none)'}",
        "",
    ]
    proposed = {c["partition"]: c for c in (result.sizing or {}).get("choices", [])}
    header = ["partition", "buckets", "groups", "rows", "bytes", "per bucket", "smallest", "largest"]
    if proposed:
        header.append("sizing")
    table = [header]
    for p in result.partitions:
        row = [
            p["partition"] or "(table)",
            _text(p["buckets"]),
            str(p["fileGroups"]),
            _text(p["rows"]),
            format_size(p["liveBytes"]),
            *(
                format_size(p[k]) if p[k] is not None else "-"
                for k in ("bytesPerBucket", "smallestFile", "largestFile")
            ),
        ]
        if proposed:
            row.append(_choice_text(proposed.get(p["partition"])))
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
        policy = sizing["policy"]
        lines += [
            "",
            f"sizing to {format_size(policy['targetFileSize'])} per file (tolerance {policy['tolerance']:g}x, "
            f"{policy['minBuckets']}..{policy['maxBuckets']} buckets): {sizing['resized']} of "
            f"{sizing['sizedPartitions']} partition(s) to rewrite, {sizing['shuffleFree']} of them shuffle-free",
            *(f"  rule {r['pattern']},{r['buckets']}" for r in sizing["rules"] or ()),
        ]
        if sizing.get("problem"):
            lines.append(f"  no rules: {sizing['problem']}")
    lines += _files_text(result.partitions)
    return "\n".join(lines)


def _files_text(partitions: list[dict[str, Any]]) -> list[str]:
    """Each partition's file groups, one per line (bucket, base file, size, rows), log files below theirs."""
    lines = ["", "latest file slice of each file group: bucket, base file, size, rows; log files below"]
    for p in partitions:
        lines.append(p["partition"] or "(table)")
        for s in p["fileSlices"]:
            bucket = "-" if s["bucket"] is None else str(s["bucket"])
            base = s["baseFile"]
            if base is None:
                lines.append(f"  {bucket:>6}  (no base file: {s['fileId']} has log files only)")
            else:
                lines.append(
                    f"  {bucket:>6}  {base['name']}  {format_size(base['size'])}  {_text(base['rows'])} rows"
                )
            lines += [f"  {'':>6}    + {log['name']}  {format_size(log['size'])}" for log in s["logFiles"]]
    return lines


def _text(value: object) -> str:
    return "-" if value is None else f"{value:,}" if isinstance(value, int) else str(value)


def _choice_text(choice: dict[str, Any] | None) -> str:
    if choice is None:
        return "-"
    if choice["verdict"] == "keep":
        return "keep"
    return f"-> {choice['newBuckets']}"
