"""When a scheduled check is due (pure: no I/O, no clock of its own).

A schedule is an interval (``90m``, ``6h``, ``7d``: due that long after the last check) or a cron
expression of five fields (``0 3 * * *``: minute, hour, day of month, month, day of week; ``*``, numbers,
ranges ``a-b``, steps ``/n`` and lists ``a,b``, in UTC). As in cron, when both day fields are restricted
a day matching either is due. ``next_after`` is the first time due after the last check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

DURATION = re.compile(r"([1-9][0-9]{0,5})m|([1-9][0-9]{0,3})h|([1-9][0-9]{0,2})d")
DURATION_UNITS = (60, 3600, 86400)  # seconds in one unit of each of the pattern's three groups
FORMAT = (
    "an interval in minutes, hours or days such as 90m, 6h or 7d, or a cron expression of five fields "
    "such as '0 3 * * *' (minute, hour, day of month, month, day of week; UTC)"
)
# (lowest, highest) of each cron field; day of week 7 is Sunday too, as 0.
_FIELDS = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))
_SEARCH_DAYS = 366 * 5  # covers any date cron can name (29 February, a weekday on the 31st)


class ScheduleError(ValueError):
    """Text that is neither an interval nor a cron expression."""


def parse_duration(text: str) -> int | None:
    """Seconds of ``90m``, ``24h`` or ``7d`` (one number, one unit), or None if it is not one."""
    match = DURATION.fullmatch(text)
    if match is None:
        return None
    return next(int(n) * unit for n, unit in zip(match.groups(), DURATION_UNITS, strict=True) if n)


@dataclass(frozen=True)
class Schedule:
    text: str
    every: int | None = None  # seconds, for an interval
    cron: tuple[frozenset[int], ...] = ()  # the values each of the five fields allows

    @classmethod
    def parse(cls, text: str) -> Schedule:
        seconds = parse_duration(text)
        if seconds is not None:
            return cls(text, every=seconds)
        fields = text.split()
        if len(fields) != len(_FIELDS):
            raise ScheduleError(text)
        allowed = tuple(_cron_field(f, low, high) for f, (low, high) in zip(fields, _FIELDS, strict=True))
        days_of_week = frozenset(d % 7 for d in allowed[4])
        return cls(text, cron=(*allowed[:4], days_of_week))

    def next_after(self, last: datetime) -> datetime:
        """The first time due after ``last``."""
        if self.every is not None:
            return last + timedelta(seconds=self.every)
        minutes, hours, _, _, _ = self.cron
        start = last.replace(second=0, microsecond=0) + timedelta(minutes=1)
        day = start.replace(hour=0, minute=0)
        for _ in range(_SEARCH_DAYS):
            if self._day_matches(day):
                for hour in sorted(hours):
                    for minute in sorted(minutes):
                        candidate = day.replace(hour=hour, minute=minute)
                        if candidate >= start:
                            return candidate
            day += timedelta(days=1)
        raise ScheduleError(f"{self.text!r} names no date")

    def _day_matches(self, day: datetime) -> bool:
        _, _, days, months, weekdays = self.cron
        if day.month not in months:
            return False
        day_restricted, weekday_restricted = len(days) < 31, len(weekdays) < 7
        by_day, by_weekday = day.day in days, (day.weekday() + 1) % 7 in weekdays
        if day_restricted and weekday_restricted:
            return by_day or by_weekday
        return by_day and by_weekday


def _cron_field(text: str, low: int, high: int) -> frozenset[int]:
    values: set[int] = set()
    for part in text.split(","):
        match = re.fullmatch(r"(\*|(\d+)(?:-(\d+))?)(?:/(\d+))?", part)
        if match is None:
            raise ScheduleError(text)
        star, first, last, step = match.groups()
        start, end = (low, high) if star == "*" else (int(first), int(last or (high if step else first)))
        step_by = int(step or 1)
        if not low <= start <= end <= high or step_by < 1:
            raise ScheduleError(text)
        values.update(range(start, end + 1, step_by))
    return frozenset(values)
