"""When a scheduled check is due (pure: no I/O, no clock of its own).

A schedule is an interval (``90m``, ``1h30m``, ``7d``: due that long after the last check) or a cron
expression in UTC, read as Debian's cron and Kubernetes CronJobs read it, by the cronsim library: five
fields (minute, hour, day of month, month, day of week) of numbers or names (``JAN``, ``MON``, in any case),
``*`` or ``?``, ranges, steps and lists, or a macro (``@hourly``, ``@daily``, ``@weekly``, ``@monthly``,
``@yearly``). When neither day field starts with ``*``, a day matching either is due, as in cron.
``next_after`` is the first time due after the last check.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from functools import lru_cache

from cronsim import CronSim, CronSimError

from hudi_bucket_operator.errors import ScheduleError

# A duration as Kubernetes writes one (metav1.Duration: 30s, 90m, 1h30m, 1h0m0s), and in days too (7d):
# whole numbers, each unit once and the largest first, the first not zero; at most 999d, 9999h, 999999m
# and 999999s. Each unit: its letter, its seconds, its digits at most.
_UNITS = (("d", 86400, 3), ("h", 3600, 4), ("m", 60, 6), ("s", 1, 6))
_SECONDS = {letter: seconds for letter, seconds, _ in _UNITS}


def _duration_pattern() -> str:
    """One alternative per largest unit: it, not zero, then each smaller unit or none (no lookahead:
    the API server's and Helm's regular expressions are RE2)."""

    def part(letter: str, digits: int, first: bool) -> str:
        number = f"[1-9][0-9]{{0,{digits - 1}}}"
        return f"{number}{letter}" if first else f"(?:(?:0|{number}){letter})?"

    return "|".join(
        part(letter, digits, True)
        + "".join(part(smaller, most, False) for smaller, _, most in _UNITS[i + 1 :])
        for i, (letter, _, digits) in enumerate(_UNITS)
    )


DURATION = re.compile(_duration_pattern())
DURATION_FORMAT = "a duration such as 30s, 90m, 1h30m, 6h or 7d (s, m, h, d: each once, the largest first)"
FORMAT = (
    "an interval (a duration such as 30s, 90m, 1h30m or 7d), or a cron expression of five fields "
    "such as '0 3 * * *' or 'MON-FRI' names (minute, hour, day of month, month, day of week; UTC), or "
    "@hourly, @daily, @weekly, @monthly or @yearly"
)
# The macros Kubernetes CronJobs take, as the five fields they stand for.
MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_FIELDS = 5
_ANY_TIME = datetime(2000, 1, 1, tzinfo=UTC)
# How far a cron expression is read for its shortest interval: every gap of a day's times shows in its
# first day (at most 1,440 firings), and of its days within a year (a leap year's, from 2000).
_GAPS_READ = 1500
_A_YEAR = timedelta(days=366)


def parse_duration(text: str) -> int | None:
    """Seconds of ``90m``, ``1h30m`` or ``7d``, or None if it is not a duration."""
    if DURATION.fullmatch(text) is None:
        return None
    return sum(int(number) * _SECONDS[letter] for number, letter in re.findall(r"([0-9]+)([dhms])", text))


@dataclass(frozen=True)
class Schedule:
    text: str
    every: int | None = None  # seconds, for an interval
    cron: str = ""  # the five fields, as cronsim reads them

    @classmethod
    def parse(cls, text: str) -> Schedule:
        seconds = parse_duration(text)
        if seconds is not None:
            return cls(text, every=seconds)
        fields = MACROS.get(text.strip().lower(), text).upper().replace("?", "*").split()
        if len(fields) != _FIELDS:  # cronsim takes a sixth, for seconds: Kubernetes does not
            raise ScheduleError(text)
        cron = " ".join(fields)
        try:
            CronSim(cron, _ANY_TIME)  # refuses a field out of range and a date that never comes
        except CronSimError as err:
            raise ScheduleError(f"{text} ({err})") from None
        return cls(text, cron=cron)

    def next_after(self, last: datetime, zone: tzinfo = UTC) -> datetime:
        """The first time due after ``last`` (in UTC), a cron expression read on the clocks of ``zone``
        (across a change of the clocks as Debian's cron runs it, as cronsim reads it)."""
        if self.every is not None:
            return last + timedelta(seconds=self.every)
        try:
            return next(CronSim(self.cron, last.astimezone(zone))).astimezone(UTC)
        except (CronSimError, StopIteration) as err:
            raise ScheduleError(f"{self.text!r} names no date") from err

    def shortest_interval(self) -> int:
        """Seconds between two runs, at the closest: the interval itself, or a cron expression's shortest
        gap between consecutive times."""
        return self.every if self.every is not None else _shortest_gap(self.cron)


@lru_cache(maxsize=1024)  # judged on every pass of every table; the expressions in use are few
def _shortest_gap(cron: str) -> int:
    times = itertools.takewhile(lambda t: t <= _ANY_TIME + _A_YEAR, CronSim(cron, _ANY_TIME))
    gaps = (int((b - a).total_seconds()) for a, b in itertools.pairwise(itertools.islice(times, _GAPS_READ)))
    return min(gaps, default=int(_A_YEAR.total_seconds()))
