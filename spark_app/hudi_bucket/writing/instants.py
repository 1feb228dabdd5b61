"""One instant of ours from request to completion: its heartbeat beats throughout (so that other jobs of
ours, and Hudi writers with lazy failed-writes cleaning, leave it alone), any failure undoes it, and
before it completes we check that no other writer took it off the timeline meanwhile (Hudi writers with
eager failed-writes cleaning roll back every pending instant when they start)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial

from hudi_bucket.core.timeline import Action, Instant
from hudi_bucket.errors import RolledBackByAnotherWriterError
from hudi_bucket.hudi.heartbeat import beating
from hudi_bucket.hudi.rollback import discard, rollback
from hudi_bucket.hudi.table import timeline_store
from hudi_bucket.spark import metadata_writer
from hudi_bucket.spark.context import TableContext


@contextmanager
def our_instant(ctx: TableContext, action: Action, partitions: tuple[str, ...]) -> Iterator[Instant]:
    """Request a new instant of ours that writes ``partitions``; undo it if the block fails."""
    store = timeline_store(ctx.storage, ctx.table)
    timestamp = store.new_instant_time()
    with beating(ctx.storage, timestamp, ctx.liveness):
        requested = store.request(timestamp, action)
        try:
            yield requested
        except BaseException:
            undo(ctx, timestamp, partitions)
            raise


def undo(ctx: TableContext, timestamp: str, partitions: tuple[str, ...]) -> None:
    """Roll our instant back; if another writer already did, remove the files we wrote for it since."""
    table = ctx.reload().table
    if table.timeline.get(timestamp) is None:
        discard(ctx.storage, table, timestamp, partitions)
    else:
        rollback(
            ctx.storage, table, timestamp, when_pending=partial(metadata_writer.roll_back, ctx, timestamp)
        )


def refuse_if_taken_away(ctx: TableContext, timestamp: str) -> None:
    """Our instant must still be pending, as we left it: call before saving what completes it."""
    instant = timeline_store(ctx.storage, ctx.table).load().get(timestamp)
    if instant is None or instant.is_completed:
        raise RolledBackByAnotherWriterError(
            f"our instant {timestamp} was rolled back by another writer while we wrote it "
            "(a Hudi writer with eager failed-writes cleaning rolls back every pending instant when it starts)"
        )
