"""`rollback`: undo one of our rescales or writes that nothing newer depends on (see ``hudi.rollback``)."""

from __future__ import annotations

from hudi_bucket.checks.preconditions import refuse_live
from hudi_bucket.hudi import rollback as hudi_rollback
from hudi_bucket.spark import metadata_writer
from hudi_bucket.spark.context import TableContext


def rollback(ctx: TableContext, instant: str) -> hudi_rollback.RollbackResult:
    refuse_live(ctx, [instant])  # a live job's instant is not ours to undo from under it
    return hudi_rollback.rollback(
        ctx.storage, ctx.table, instant, when_pending=lambda: metadata_writer.roll_back(ctx, instant)
    )
