"""Before any command writes: finish our own interrupted work, then refuse what could lose data."""

from __future__ import annotations

from hudi_bucket.core.preflight import PreflightResult, preflight
from hudi_bucket.hudi.rollback import rollback
from hudi_bucket.hudi.table import timeline_store
from hudi_bucket.jobs.context import TableContext


def roll_back_our_leftovers(ctx: TableContext) -> tuple[TableContext, list[str]]:
    """Roll back every pending instant we started (a crashed or killed run); other pending instants
    are not ours to touch."""
    store = timeline_store(ctx.storage, ctx.table)
    leftovers = [i.timestamp for i in ctx.table.timeline.pending() if store.is_ours(i)]
    for timestamp in leftovers:
        rollback(ctx.storage, ctx.reload().table, timestamp)
    return (ctx.reload() if leftovers else ctx), leftovers


def check_table(ctx: TableContext, *, disable_metadata_table: bool = False) -> PreflightResult:
    """Preflight the table as it is now; raises PreflightError listing every refusal."""
    store = timeline_store(ctx.storage, ctx.table)
    ours = frozenset(i.timestamp for i in ctx.table.timeline.pending() if store.is_ours(i))
    result = preflight(ctx.table.facts(), our_pending=ours, disable_metadata_table=disable_metadata_table)
    result.raise_if_refused()
    return result
