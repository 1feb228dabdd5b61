"""The leader election's decision: what a candidate does with the Lease it read."""

from __future__ import annotations

import pytest

from hudi_bucket_operator.runtime.leadership import LeaseRecord, Step, Timing, identity, next_step

ME = "operator-7d9f_1a2b3c4d"


def lease(holder: str, duration: int = 15) -> LeaseRecord:
    return LeaseRecord(holder=holder, duration_seconds=duration, transitions=3, version="42")


@pytest.mark.parametrize(
    ("record", "unchanged_for", "step"),
    [
        (None, 0.0, Step.CREATE),
        (lease(ME), 0.0, Step.RENEW),
        (lease(ME), 60.0, Step.RENEW),  # ours, even late: renewing it is what keeps it
        (lease(""), 0.0, Step.TAKE),  # released by a holder that stopped cleanly
        (lease("other_00000000"), 14.9, Step.WAIT),
        (lease("other_00000000"), 15.0, Step.TAKE),  # unchanged for its whole duration, by our clock
        (lease("other_00000000", duration=1), 1.0, Step.TAKE),  # released with a 1 s duration
    ],
)
def test_a_candidate_takes_a_lease_only_when_free_released_or_unchanged_for_its_duration(
    record: LeaseRecord | None, unchanged_for: float, step: Step
) -> None:
    assert next_step(record, ME, unchanged_for) is step


def test_a_lease_is_renewed_often_and_given_up_well_before_another_may_take_it() -> None:
    timing = Timing(15)
    assert (timing.renew_deadline, timing.retry_period) == (10.0, 2.0)  # client-go's defaults
    assert timing.retry_period * 4 < timing.renew_deadline < timing.lease_seconds


def test_a_restarted_container_is_a_new_candidate() -> None:
    first, second = identity("operator-7d9f"), identity("operator-7d9f")
    assert first.startswith("operator-7d9f_")
    assert first != second
