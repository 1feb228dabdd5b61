"""The ``verify`` command: every partition checked against the hashing_config in force (``layout_check``),
or, on a table that has none, against the plain bucket index's count it records."""

from __future__ import annotations

from hudi_bucket.checks.layout_check import VerifyResult, verify_table
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.errors import LayoutViolationError, NotBucketIndexedError
from hudi_bucket.hudi import config_store
from hudi_bucket.hudi.table_creation import recorded_num_buckets
from hudi_bucket.spark.context import TableContext


def verify(ctx: TableContext) -> VerifyResult:
    """Check every partition against the config in force, else against the bucket count the table
    records (a plain bucket index: one count everywhere): NotBucketIndexedError without either,
    LayoutViolationError (carrying the result) when anything is out of place."""
    in_force = config_store.load_in_force(ctx.storage, ctx.table.timeline.pending_replace_timestamps())
    if in_force is not None:
        rules = in_force.to_rules()
    else:
        recorded = recorded_num_buckets(ctx.table.config)
        if recorded is None:
            raise NotBucketIndexedError(
                f"{ctx.table.uri} has no hashing_config and records no bucket count: there is nothing to"
                " verify against",
                hint="apply rules first (hudi-bucket-job apply ... --convert for a table that is not bucket-indexed)",
            )
        rules = BucketRules((), recorded)
    matcher = ctx.matcher
    result = verify_table(
        ctx.spark,
        ctx.storage,
        ctx.table,
        rules_for_partition=lambda partition: rules.buckets_for(partition, matcher),
        hash_fields=ctx.hash_fields,
        key_style=ctx.key_style,
    )
    if not result.ok:
        raise LayoutViolationError(f"{len(result.violations)} bucket layout violation(s)", result=result)
    return result
