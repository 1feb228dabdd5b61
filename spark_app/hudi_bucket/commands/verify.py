"""The ``verify`` command: every partition checked against the hashing_config in force (``layout_check``)."""

from __future__ import annotations

from hudi_bucket.checks.layout_check import VerifyResult, verify_table
from hudi_bucket.errors import LayoutViolationError, NotBucketIndexedError
from hudi_bucket.hudi import config_store
from hudi_bucket.spark.context import TableContext


def verify(ctx: TableContext) -> VerifyResult:
    """Check every partition against the config in force: NotBucketIndexedError without one,
    LayoutViolationError (carrying the result) when anything is out of place."""
    in_force = config_store.load_in_force(ctx.storage, ctx.table.timeline.pending_replace_timestamps())
    if in_force is None:
        raise NotBucketIndexedError(
            f"{ctx.table.uri} has no hashing_config: there is no bucket count to verify against",
            hint="apply rules first (hudi-bucket-job apply ... --convert for a table that is not bucket-indexed)",
        )
    rules, matcher = in_force.to_rules(), ctx.matcher
    result = verify_table(
        ctx.spark,
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
    return result
