"""What `kubectl hbt` prints, made from the tables as the API server holds them (no I/O).

A table is read leniently: the plugin shows what the status says even when the spec is one the operator
refuses, so that a broken table is listed beside the others rather than hidden.

Whatever a table holds is its author's text (its patterns, its annotations, its partitions' folder names
through the jobs' reports), so each such value is printed through ``terminal_safe``: a terminal escape in it
would otherwise redraw what the approver reads.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from hudi_bucket.core.sizing import format_size
from hudi_bucket_operator.resource.api import APPROVE, DENY
from hudi_bucket_operator.resource.conditions import READY, awaiting_approval_since, condition
from hudi_bucket_operator.resource.table_status import PlanSummary, TableStatus
from hudi_bucket_operator.resource.writers_state import ApplySteps, Step

NOTHING = "-"
SHORT_PLAN_ID = 12  # hex digits of a plan's hash that people read (the list shows them)
# File-size bands of the plan's chart: the powers of four from 1 MiB to 4 GiB, each a row.
_BANDS = tuple(4**power * 2**20 for power in range(7))
_BAR = 30  # characters of the longest bar


def terminal_safe(text: str) -> str:
    """``text`` with each character a terminal would act on or hide written out as ``repr`` writes it
    (ESC as ``\\x1b``, a newline as ``\\n``, U+202E as ``\\u202e``), so the reader sees it is there.

    Unprintable is what ``str.isprintable`` says: controls (C0, DEL, C1), format and bidi characters,
    separators other than the space, surrogates, private and unassigned code points. Ordinary text,
    ``ü`` included, is left alone, and so are backslashes: doubling them would make every pattern
    (``\\d``, ``\\.``) hard to read, and a pattern's ``\\x1b`` means what an ESC in it would anyway."""
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


@dataclass(frozen=True)
class Table:
    """One HudiBucketTable as the plugin reads it."""

    namespace: str
    name: str
    status: TableStatus
    approved_plan: str = ""  # spec.apply.approvedPlan
    annotations: Mapping[str, str] = field(default_factory=dict)
    managed_by: str = ""  # a GitOps tool keeping the manifest in step with Git, if one does
    resource_version: str = ""  # the version read: a decision applies to the table as it was shown

    @classmethod
    def of(cls, resource: Mapping[str, Any]) -> Table:
        metadata = resource.get("metadata") or {}
        apply = (resource.get("spec") or {}).get("apply") or {}
        return cls(
            namespace=str(metadata.get("namespace", "")),
            name=str(metadata.get("name", "")),
            status=TableStatus.of(resource.get("status")),
            approved_plan=str(apply.get("approvedPlan") or ""),
            annotations=dict(metadata.get("annotations") or {}),
            managed_by=gitops_manager(metadata),
            resource_version=str(metadata.get("resourceVersion") or ""),
        )

    @property
    def shown_name(self) -> str:
        """namespace/name, made safe to print."""
        return terminal_safe(f"{self.namespace}/{self.name}")

    @property
    def plan(self) -> PlanSummary | None:
        return self.status.plan

    def decision(self) -> str:
        """What was decided of the plan: 'approved', 'denied' (a deny wins, as the operator reads it), or ''."""
        plan_id = self.plan.id if self.plan is not None else None
        if not plan_id:
            return ""
        if self.annotations.get(DENY) == plan_id:
            return "denied"
        return "approved" if plan_id in (self.approved_plan, self.annotations.get(APPROVE)) else ""


def gitops_manager(metadata: Mapping[str, Any]) -> str:
    """Argo CD or Flux, when the resource carries the marks either puts on what it applies, else ''.

    Flux reconciles what it applies unless told not to; whether an Argo CD application self-heals is
    not on the resource, so any Argo-tracked table is taken to be kept in step with Git."""
    labels = metadata.get("labels") or {}
    annotations = metadata.get("annotations") or {}
    if "argocd.argoproj.io/tracking-id" in annotations or "argocd.argoproj.io/instance" in labels:
        return "Argo CD"
    flux = any(key.startswith(("kustomize.toolkit.fluxcd.io/", "helm.toolkit.fluxcd.io/")) for key in labels)
    if flux and annotations.get("kustomize.toolkit.fluxcd.io/reconcile") != "disabled":
        return "Flux"
    return ""


def age(stamp: str | None, now: datetime) -> str:
    """How long ago ``stamp`` (RFC 3339) was, in its largest unit: 45s, 12m, 3h, 2d."""
    if not stamp:
        return NOTHING
    seconds = max(0, int((now - datetime.fromisoformat(stamp.replace("Z", "+00:00"))).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _columns(rows: Sequence[Sequence[str]]) -> str:
    """The rows as aligned columns. Every cell is made safe here, before the widths are measured on it."""
    shown = [[terminal_safe(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in shown) for i in range(len(shown[0]))]
    return "\n".join(
        "   ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in shown
    )


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _config(status: TableStatus) -> str:
    config = status.config
    if config is None or config.default is None:
        return NOTHING
    rules = len([rule for rule in (config.expressions or "").split(";") if rule])
    return f"{_counted(rules, 'rule')}, default {config.default}"


def _plan(table: Table) -> str:
    plan = table.plan
    if plan is None or not plan.id:
        return NOTHING
    if plan.noop:
        return "none needed"
    count = plan.partitions or 0
    said = f"{short_id(plan.id)} {_counted(count, 'partition')}"
    return f"{said}, {table.decision()}" if table.decision() else said


def _verify(status: TableStatus, now: datetime) -> str:
    layout = status.layout
    if layout is None or not layout.checked_at:
        return NOTHING
    found = "ok" if not layout.violations else _counted(layout.violations, "violation")
    return f"{found} {age(layout.checked_at, now)} ago"


def _skew(status: TableStatus) -> str:
    """The largest file group against the median, and the largest's size, as the last check measured."""
    layout = status.layout
    if layout is None or layout.skew is None or not layout.largest_file_group_bytes:
        return NOTHING
    return f"{layout.skew:.1f}x of {format_size(layout.largest_file_group_bytes)}"


def _writers(status: TableStatus, now: datetime) -> str:
    state = status.writers
    if isinstance(state, ApplySteps) and state.step is not Step.AWAITING_WINDOW and state.paused_at:
        return f"{len(state.items or ())} paused {age(state.paused_at, now)}"
    return NOTHING


def short_id(plan_id: str) -> str:
    """A plan id as people read it: its first 12 hex digits (``kubectl hbt approve --plan`` takes them)."""
    return plan_id.removeprefix("sha256:")[:SHORT_PLAN_ID]


def _reason(status: TableStatus) -> str:
    """Why the table is not Ready, as its Ready condition says in one word."""
    ready = condition(status, READY)
    return NOTHING if ready is None or ready.status == "True" or not ready.reason else ready.reason


def _next_window(status: TableStatus, now: datetime) -> str:
    state = status.writers
    if isinstance(state, ApplySteps) and state.step is Step.AWAITING_WINDOW and state.next_window:
        opens = datetime.fromisoformat(state.next_window.replace("Z", "+00:00"))
        return f"in {age(now.isoformat(), opens)}"  # from now until it opens
    return NOTHING


def table_list(
    tables: Iterable[Table], now: datetime | None = None, headers: bool = True, wide: bool = False
) -> str:
    """``kubectl hbt list``: each table's phase, config, plan, wait, last verify, skew and writers; ``wide``
    (``-o wide``) adds why it is not Ready and when its window opens."""
    now = now or datetime.now(UTC)
    header = ("NAMESPACE", "NAME", "PHASE", "CONFIG", "PLAN", "WAITING", "VERIFIED", "SKEW", "WRITERS")
    more = ("REASON", "WINDOW") if wide else ()
    rows = [header + more] + [
        (
            table.namespace,
            table.name,
            table.status.phase or "New",
            _config(table.status),
            _plan(table),
            age(awaiting_approval_since(table.status), now),
            _verify(table.status, now),
            _skew(table.status),
            _writers(table.status, now),
            *((_reason(table.status), _next_window(table.status, now)) if wide else ()),
        )
        for table in sorted(tables, key=lambda t: (t.namespace, t.name))
    ]
    if len(rows) == 1:
        return "No HudiBucketTables found."
    return _columns(rows) if headers else _columns(rows).split("\n", 1)[1]


def plan_view(table: Table) -> str:
    """``kubectl hbt plan``: the plan as a diff of each partition's bucket count, with its rows and bytes,
    and a chart of the average file size per partition before and after."""
    plan = table.plan
    if plan is None or not plan.id:
        phase = terminal_safe(table.status.phase or "New")
        return f"{table.shown_name} has no plan yet (phase {phase})."
    lines = [f"Plan {terminal_safe(plan.id)}", f"  table     {table.shown_name}"]
    decided = table.decision()
    approved = {"approved": "yes", "denied": "no: denied"}.get(
        decided, f"no: kubectl hbt approve {terminal_safe(table.name)}"
    )
    lines.append(f"  approved  {approved}")
    if plan.noop:
        return "\n".join([*lines, "  The table already is what the spec asks: nothing to apply."])
    config, rules = table.status.config, plan.rules
    if rules is not None:
        before = NOTHING if config is None else _rules(config.expressions, config.default)
        lines += [f"- config  {before}", f"+ config  {_rules(rules.expressions, rules.default)}"]
    lines.append(
        f"  rewrites  {_counted(plan.partitions or 0, 'partition')}, {plan.rows or 0:,} rows, "
        f"{format_size(plan.bytes or 0)}"
        + (f" ({plan.repairs} to repair their layout)" if plan.repairs else "")
    )
    items = plan.items or []
    if items:
        rows = [("", "PARTITION", "BUCKETS", "ROWS", "BYTES", "FILE SIZE", "REASON")]
        for item in items:
            old = NOTHING if item.old_buckets is None else str(item.old_buckets)
            size_before = _file_size(item.bytes, item.file_groups)
            size_after = _file_size(item.bytes, item.new_buckets)
            shuffle = ", shuffle-free" if item.shuffle_free else ""
            rows.append(
                (
                    "~",
                    item.partition or "",
                    f"{old} -> {item.new_buckets}",
                    f"{item.rows or 0:,}",
                    format_size(item.bytes or 0),
                    f"{size_before} -> {size_after}",
                    f"{item.reason or ''}{shuffle}",
                )
            )
        lines += ["", _columns(rows)]
        if plan.omitted:
            lines.append(f"  ... and {plan.omitted} more partitions (the largest are shown)")
        lines += ["", *file_size_chart(plan)]
    return "\n".join(lines)


def _rules(expressions: str | None, default: int | None) -> str:
    return f"{terminal_safe(expressions or '')} default {default}"


def _file_size(size: int | None, files: int | None) -> str:
    return NOTHING if not size or not files else format_size(size // files)


def file_size_chart(plan: PlanSummary) -> list[str]:
    """The shown partitions by average file size, before and after, one row per band."""
    before = [(item.bytes or 0) / item.file_groups for item in plan.items or [] if item.file_groups]
    after = [(item.bytes or 0) / item.new_buckets for item in plan.items or [] if item.new_buckets]
    counts = [_banded(before), _banded(after)]
    most = max(*counts[0], *counts[1], 1)
    labels = _band_labels()
    width = max(map(len, labels))
    lines = ["Average file size per partition (before | after)"]
    for band, label in enumerate(labels):
        before_bar, after_bar = (_bar(count[band], most) for count in counts)
        lines.append(f"  {label:>{width}}  {before_bar:<{_BAR + 6}} | {after_bar}".rstrip())
    return lines


def _banded(sizes: Iterable[float]) -> list[int]:
    counts = [0] * (len(_BANDS) + 1)
    for size in sizes:
        counts[sum(1 for edge in _BANDS if size >= edge)] += 1
    return counts


def _band_labels() -> list[str]:
    edges = [format_size(edge).replace(".0", "") for edge in _BANDS]
    return [f"< {edges[0]}", *(f"{a} - {b}" for a, b in itertools.pairwise(edges)), f">= {edges[-1]}"]


def _bar(count: int, most: int) -> str:
    if not count:
        return ""
    return "#" * max(1, math.floor(_BAR * count / most)) + f" {count}"


def history_view(table: Table) -> str:
    """``kubectl hbt history``: the applies that rewrote the table, newest first."""
    entries = table.status.history or []
    if not entries:
        return f"{table.shown_name} has no apply in its history yet."
    rows = [
        (
            "FINISHED",
            "OUTCOME",
            "PLAN",
            "PARTITIONS",
            "ROWS",
            "SECONDS",
            "WRITERS PAUSED",
            "DECIDED BY",
            "REASON",
        )
    ]
    for entry in entries:
        downtime = entry.writers_downtime_seconds
        rows.append(
            (
                entry.finished or NOTHING,
                entry.outcome or NOTHING,
                short_id(entry.plan_id or "") or NOTHING,
                str(entry.partitions if entry.partitions is not None else NOTHING),
                f"{entry.rows:,}" if entry.rows is not None else NOTHING,
                f"{entry.seconds:.0f}" if entry.seconds is not None else NOTHING,
                NOTHING if downtime is None else f"{downtime:.0f}s",
                entry.decided_by or NOTHING,
                entry.reason or NOTHING,
            )
        )
    return _columns(rows)


def plan_to_approve(table: Table, named: str = "") -> str:
    """The id of the plan there is to approve; ValueError when there is none, or when it is not the plan
    ``named`` (its id, or the start of it that the list and the plan show) says the person read."""
    plan = table.plan
    if plan is None or not plan.id or plan.noop:
        raise ValueError(f"{table.shown_name} has no plan to approve")
    return _as_named(table, plan.id, named, "plan is now", "decided")


def plan_awaiting_window(table: Table, named: str = "") -> str:
    """The id of the approved plan waiting for its window (which ``apply-now`` starts); ValueError when none
    waits, or when it is not the plan ``named``."""
    state = table.status.writers
    if not isinstance(state, ApplySteps) or state.step is not Step.AWAITING_WINDOW:
        raise ValueError(f"{table.shown_name} has no approved plan waiting for its window")
    return _as_named(table, state.plan_id, named, "plan waiting for its window is", "started")


def _as_named(table: Table, plan_id: str, named: str, which: str, undone: str) -> str:
    """``plan_id``, when ``named`` (if given) names it; else ValueError saying which plan it is."""
    if named and not _names_plan(named, plan_id):
        raise ValueError(
            f"{table.shown_name}'s {which} {terminal_safe(plan_id)}, not the plan {terminal_safe(named)} you "
            f"named: nothing was {undone}; read it again (kubectl hbt plan {terminal_safe(table.name)})"
        )
    return plan_id


def _names_plan(named: str, plan_id: str) -> bool:
    """The full id, or at least the 12 characters of its hash that the list shows."""
    digest = named.removeprefix("sha256:")
    return len(digest) >= SHORT_PLAN_ID and plan_id.removeprefix("sha256:").startswith(digest)


def approval_line(plan_id: str) -> str:
    """What to commit to approve the plan in Git, where the manifest lives."""
    return f"spec:\n  apply:\n    approvedPlan: {terminal_safe(plan_id)}"


def denial_lines() -> str:
    """What a manifest keeps to leave its plans unapplied until one is approved there."""
    return "spec:\n  apply:\n    policy: Manual"
