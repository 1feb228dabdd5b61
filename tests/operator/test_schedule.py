"""A verify schedule is an interval after the last check (a duration as Kubernetes writes one, or in days),
or the next minute a cron expression names, as cron and Kubernetes CronJobs read it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hudi_bucket_operator.errors import ScheduleError
from hudi_bucket_operator.resource.schedule import Schedule

LAST = datetime(2026, 11, 23, 12, 30, 15, tzinfo=UTC)  # a Monday


@pytest.mark.parametrize(
    ("text", "due"),
    [
        ("6h", datetime(2026, 11, 23, 18, 30, 15, tzinfo=UTC)),
        ("90m", datetime(2026, 11, 23, 14, 0, 15, tzinfo=UTC)),
        ("1h30m", datetime(2026, 11, 23, 14, 0, 15, tzinfo=UTC)),  # as Kubernetes writes durations
        ("1h0m0s", datetime(2026, 11, 23, 13, 30, 15, tzinfo=UTC)),  # as Go prints one
        ("45s", datetime(2026, 11, 23, 12, 31, 0, tzinfo=UTC)),
        ("1d12h", datetime(2026, 11, 25, 0, 30, 15, tzinfo=UTC)),
        ("0 3 * * *", datetime(2026, 11, 24, 3, 0, tzinfo=UTC)),
        ("*/20 * * * *", datetime(2026, 11, 23, 12, 40, tzinfo=UTC)),
        ("30 12 * * *", datetime(2026, 11, 24, 12, 30, tzinfo=UTC)),  # the minute of the check is past
        ("0 0 * * 0", datetime(2026, 11, 29, 0, 0, tzinfo=UTC)),  # Sunday
        ("0 0 * * 7", datetime(2026, 11, 29, 0, 0, tzinfo=UTC)),  # Sunday too
        ("0 6 1,15 * *", datetime(2026, 12, 1, 6, 0, tzinfo=UTC)),
        ("0 6 1 * 2", datetime(2026, 11, 24, 6, 0, tzinfo=UTC)),  # either day field, as cron
        ("0 0 29 2 *", datetime(2028, 2, 29, 0, 0, tzinfo=UTC)),
        ("15 9-17/4 * 11-12 1-5", datetime(2026, 11, 23, 13, 15, tzinfo=UTC)),
        # Restricted is how a field is written, not how many days it allows: neither starts with '*', so
        # either day field will do, and 1-31 is every day (this fired on Mondays only before cronsim).
        ("0 3 1-31 * 1", datetime(2026, 11, 24, 3, 0, tzinfo=UTC)),
        ("0 3 */1 * 1", datetime(2026, 11, 30, 3, 0, tzinfo=UTC)),  # starts with '*': both must match
        ("0 3 * * MON", datetime(2026, 11, 30, 3, 0, tzinfo=UTC)),
        ("0 3 * jan,Feb sun-mon", datetime(2027, 1, 3, 3, 0, tzinfo=UTC)),  # names, in any case
        ("0 3 ? * *", datetime(2026, 11, 24, 3, 0, tzinfo=UTC)),  # '?' as Kubernetes reads it: any
        ("@daily", datetime(2026, 11, 24, 0, 0, tzinfo=UTC)),
        ("@hourly", datetime(2026, 11, 23, 13, 0, tzinfo=UTC)),
        ("@weekly", datetime(2026, 11, 29, 0, 0, tzinfo=UTC)),
        ("@monthly", datetime(2026, 12, 1, 0, 0, tzinfo=UTC)),
        ("@yearly", datetime(2027, 1, 1, 0, 0, tzinfo=UTC)),
    ],
)
def test_the_next_check_is_due(text: str, due: datetime) -> None:
    assert Schedule.parse(text).next_after(LAST) == due


@pytest.mark.parametrize(
    "text",
    [
        "",
        "6",
        "0h",
        "0h30m",  # the largest unit is not zero
        "30m1h",  # the largest first
        "1h1h",
        "1.5h",  # whole numbers
        "500ms",
        "2w",
        "6 h",
        "* * * *",
        "60 * * * *",
        "* 24 * * *",
        "0 0 0 * *",
        "*/0 * * * *",
        "a b c d e",
        "0 0 3 * * *",  # six fields: seconds first, which Kubernetes does not take
        "@fortnightly",
        "0 3 * * MONDAY",
    ],
)
def test_text_that_is_neither_an_interval_nor_cron_is_refused(text: str) -> None:
    with pytest.raises(ScheduleError):
        Schedule.parse(text)


def test_a_date_that_never_comes_is_refused() -> None:
    with pytest.raises(ScheduleError):
        Schedule.parse("0 0 31 2 *")
