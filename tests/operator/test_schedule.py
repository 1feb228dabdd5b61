"""A verify schedule is an interval after the last check, or the next minute a cron expression names."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hudi_bucket_operator.schedule import Schedule, ScheduleError

LAST = datetime(2026, 11, 23, 12, 30, 15, tzinfo=UTC)  # a Monday


@pytest.mark.parametrize(
    ("text", "due"),
    [
        ("6h", datetime(2026, 11, 23, 18, 30, 15, tzinfo=UTC)),
        ("90m", datetime(2026, 11, 23, 14, 0, 15, tzinfo=UTC)),
        ("0 3 * * *", datetime(2026, 11, 24, 3, 0, tzinfo=UTC)),
        ("*/20 * * * *", datetime(2026, 11, 23, 12, 40, tzinfo=UTC)),
        ("30 12 * * *", datetime(2026, 11, 24, 12, 30, tzinfo=UTC)),  # the minute of the check is past
        ("0 0 * * 0", datetime(2026, 11, 29, 0, 0, tzinfo=UTC)),  # Sunday
        ("0 0 * * 7", datetime(2026, 11, 29, 0, 0, tzinfo=UTC)),  # Sunday too
        ("0 6 1,15 * *", datetime(2026, 12, 1, 6, 0, tzinfo=UTC)),
        ("0 6 1 * 2", datetime(2026, 11, 24, 6, 0, tzinfo=UTC)),  # either day field, as cron
        ("0 0 29 2 *", datetime(2028, 2, 29, 0, 0, tzinfo=UTC)),
        ("15 9-17/4 * 11-12 1-5", datetime(2026, 11, 23, 13, 15, tzinfo=UTC)),
    ],
)
def test_the_next_check_is_due(text: str, due: datetime) -> None:
    assert Schedule.parse(text).next_after(LAST) == due


@pytest.mark.parametrize(
    "text",
    ["", "6", "0h", "6 h", "* * * *", "60 * * * *", "* 24 * * *", "0 0 0 * *", "*/0 * * * *", "a b c d e"],
)
def test_text_that_is_neither_an_interval_nor_cron_is_refused(text: str) -> None:
    with pytest.raises(ScheduleError):
        Schedule.parse(text)


def test_a_date_that_never_comes_is_refused() -> None:
    with pytest.raises(ScheduleError):
        Schedule.parse("0 0 31 2 *").next_after(LAST)
