"""Before any command writes: finish our own interrupted work, then refuse what could lose data."""

from __future__ import annotations

from functools import partial

from hudi_bucket.core.engine import Engine
from hudi_bucket.core.preflight import PreflightResult, preflight
from hudi_bucket.errors import AnotherJobRunningError
from hudi_bucket.hudi.heartbeat import last_beats, now_ms
from hudi_bucket.hudi.rollback import rollback
from hudi_bucket.hudi.table import timeline_store
from hudi_bucket.spark import metadata_writer
from hudi_bucket.spark.context import TableContext


def roll_back_our_leftovers(ctx: TableContext) -> tuple[TableContext, list[str]]:
    """Roll back every pending instant we started whose job is gone (its heartbeat expired: a crashed or
    killed run); other pending instants are not ours to touch. Refuses while a job of ours is live."""
    store = timeline_store(ctx.storage, ctx.table)
    ours = [i.timestamp for i in ctx.table.timeline.pending() if store.is_ours(i)]
    refuse_live(ctx, ours)
    for timestamp in ours:
        rollback(
            ctx.storage,
            ctx.reload().table,
            timestamp,
            when_pending=partial(metadata_writer.roll_back, ctx, timestamp),
        )
    return (ctx.reload() if ours else ctx), ours


def refuse_live(ctx: TableContext, instants: list[str]) -> None:
    """Refuse when any of these instants has a live heartbeat: its job is still writing it."""
    beats, now = last_beats(ctx.storage), now_ms()
    live = [t for t in instants if not ctx.liveness.expired(beats.get(t), now)]
    if live:
        ages = ", ".join(f"{t} (last heartbeat {(now - beats[t]) / 1000:.0f} s ago)" for t in live)
        raise AnotherJobRunningError(
            f"another hudi-bucket-job is writing this table: instant {ages}",
            hint=f"wait for it to finish; if its process died, its heartbeat expires "
            f"{ctx.liveness.timeout_ms / 1000:.0f} s after its last beat and the next run rolls it back",
        )


def check_table(
    ctx: TableContext,
    *,
    disable_metadata_table: bool = False,
    engine: Engine = Engine.NATIVE,
    others_pending_noted: bool = False,
    rewrites: bool = False,
) -> PreflightResult:
    """Preflight the table as it is now, for ``engine`` (Auto: chosen here); raises PreflightError
    listing every refusal. ``others_pending_noted``: for a plan, which writes nothing, other writers'
    pending instants are noted, not refused. ``rewrites``: an apply, which keeps a live metadata table
    where Hudi's metadata writer is loaded."""
    store = timeline_store(ctx.storage, ctx.table)
    ours = frozenset(i.timestamp for i in ctx.table.timeline.pending() if store.is_ours(i))
    result = preflight(
        ctx.table.facts(),
        our_pending=ours,
        disable_metadata_table=disable_metadata_table,
        engine=engine,
        others_pending_noted=others_pending_noted,
        # A rewrite keeps the metadata table through Hudi's writer; our `write` does not yet.
        metadata_writer=rewrites and metadata_writer.available(ctx.spark),
    )
    result.raise_if_refused()
    return result
