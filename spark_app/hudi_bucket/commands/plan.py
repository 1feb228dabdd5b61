"""`plan`: what `apply` would do to the table now (hudi_bucket.planning), with the keys a conversion
finds more than once counted, and one line that says it."""

from __future__ import annotations

from hudi_bucket.contract.reports import TABLE_ITEMS, PlanResult
from hudi_bucket.contract.requests import RescaleOptions
from hudi_bucket.planning import sized_plan
from hudi_bucket.spark.context import TableContext


def plan(ctx: TableContext, options: RescaleOptions) -> tuple[str, PlanResult]:
    """The plan, its checks and what sizing decided, and what they come to in one line."""
    full_plan, checks, sizing = sized_plan(ctx, options, count_duplicates=True)
    the_plan = full_plan.reported()
    kept = "every copy kept, as --keep-duplicates asks" if options.keep_duplicates else "one copy kept"
    message = (
        "already converged: nothing to do"
        if the_plan.noop
        else f"plan {the_plan.id}: rewrite {the_plan.partitions} partition(s), {the_plan.rows} row(s)"
        + (f", {the_plan.repairs} of them to repair their layout" if the_plan.repairs else "")
        + (", new config version" if the_plan.config_changes else "")
        + (
            f"; {the_plan.duplicate_keys} key(s) found more than once ({kept})"
            if the_plan.duplicate_keys
            else ""
        )
    )
    if sizing is not None:
        shuffle_free = sum(1 for c in sizing.resized if c.shuffle_free)
        message += (
            f" (sizing: {len(sizing.resized)} of {len(sizing.choices)} sized partition(s) resized, "
            f"{shuffle_free} without a shuffle, {len(sizing.rules)} rule(s))"
        )
    sized = None if sizing is None else sizing.reported(max_choices=TABLE_ITEMS).to_dict()
    return message, PlanResult(the_plan, checks.to_dict(), sized)
