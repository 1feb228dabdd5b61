"""Hudi's timeline, in Hudi's own terms: instants made of a timestamp, an Action and a State.

Two on-disk layouts exist. Layout 1 (table version 6) keeps instant files in ``.hoodie/`` and names a
completed instant ``T.action``; layout 2 (versions 8 and 9) keeps them in ``.hoodie/timeline/`` and names
it ``T_C.action`` with C the completion time. Both name a pending instant ``T.action.requested`` or
``T.action.inflight``, except that an inflight *commit* is plain ``T.inflight``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import IntEnum, StrEnum


class Action(StrEnum):
    COMMIT = "commit"
    DELTA_COMMIT = "deltacommit"
    REPLACE_COMMIT = "replacecommit"
    CLUSTERING = "clustering"
    COMPACTION = "compaction"
    LOG_COMPACTION = "logcompaction"
    CLEAN = "clean"
    ROLLBACK = "rollback"
    SAVEPOINT = "savepoint"
    RESTORE = "restore"
    INDEXING = "indexing"
    SCHEMA_COMMIT = "schemacommit"


class State(IntEnum):
    """Ordered: an instant only moves forward."""

    REQUESTED = 0
    INFLIGHT = 1
    COMPLETED = 2


class TimelineLayout(IntEnum):
    V1 = 1
    V2 = 2

    @property
    def folder(self) -> str:
        """Where instant files live, relative to the table root (the default timeline path)."""
        return ".hoodie" if self is TimelineLayout.V1 else ".hoodie/timeline"


# Actions that add or replace base files: what readers and the bucket index care about.
WRITE_ACTIONS = frozenset({Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT})
# Pending replace work: an insert-overwrite replacecommit, or clustering (its own action in layout 2).
REPLACE_ACTIONS = frozenset({Action.REPLACE_COMMIT, Action.CLUSTERING})

_FILE_NAME = re.compile(r"^(?P<ts>\d+)(?:_(?P<done>\d+))?\.(?P<suffix>[a-z.]+)$")
_ACTIONS = {a.value: a for a in Action}
INSTANT_FORMAT = "%Y%m%d%H%M%S%f"  # yyyyMMddHHmmssSSS once %f (microseconds) is cut to 3 digits


@dataclass(frozen=True, order=True)
class Instant:
    timestamp: str
    action: Action
    state: State
    completion_time: str | None = None

    @property
    def is_completed(self) -> bool:
        return self.state is State.COMPLETED

    def file_name(self, layout: TimelineLayout) -> str:
        if self.state is State.REQUESTED:
            return f"{self.timestamp}.{self.action.value}.requested"
        if self.state is State.INFLIGHT:
            if self.action is Action.COMMIT:
                return f"{self.timestamp}.inflight"
            return f"{self.timestamp}.{self.action.value}.inflight"
        if layout is TimelineLayout.V1:
            return f"{self.timestamp}.{self.action.value}"
        if self.completion_time is None:
            raise ValueError(f"completed instant {self.timestamp} needs a completion time in layout 2")
        return f"{self.timestamp}_{self.completion_time}.{self.action.value}"

    @classmethod
    def parse(cls, file_name: str) -> Instant | None:
        """The instant a timeline file stands for; None for anything that is not an instant file."""
        match = _FILE_NAME.match(file_name)
        if not match:
            return None
        timestamp, completion, suffix = match["ts"], match["done"], match["suffix"]
        if suffix == "inflight":
            return cls(timestamp, Action.COMMIT, State.INFLIGHT)
        head, _, tail = suffix.partition(".")
        action = _ACTIONS.get(head)
        if action is None:
            return None
        if tail == "requested":
            return cls(timestamp, action, State.REQUESTED)
        if tail == "inflight":
            return cls(timestamp, action, State.INFLIGHT)
        if tail:
            return None
        return cls(timestamp, action, State.COMPLETED, completion)


@dataclass(frozen=True)
class Timeline:
    """The active timeline: each instant once, in its most advanced state, sorted by timestamp."""

    instants: tuple[Instant, ...]

    @classmethod
    def from_file_names(cls, names: Iterable[str]) -> Timeline:
        latest: dict[str, Instant] = {}
        for name in names:
            instant = Instant.parse(name)
            if instant is None:
                continue
            seen = latest.get(instant.timestamp)
            # A completed compaction is a `commit`, a completed clustering a `replacecommit`: the most
            # advanced file names the action readers see.
            if seen is None or instant.state > seen.state:
                latest[instant.timestamp] = instant
        return cls(tuple(sorted(latest.values())))

    def completed(self) -> tuple[Instant, ...]:
        return tuple(i for i in self.instants if i.is_completed)

    def pending(self) -> tuple[Instant, ...]:
        return tuple(i for i in self.instants if not i.is_completed)

    def get(self, timestamp: str) -> Instant | None:
        return next((i for i in self.instants if i.timestamp == timestamp), None)

    @property
    def latest_completed(self) -> Instant | None:
        done = self.completed()
        return done[-1] if done else None

    @property
    def first_timestamp(self) -> str | None:
        return self.instants[0].timestamp if self.instants else None

    def is_committed(self, timestamp: str) -> bool:
        """Whether data written at ``timestamp`` is visible: its instant completed, or it is older than
        the active timeline (archived instants all completed)."""
        instant = self.get(timestamp)
        if instant is not None:
            return instant.is_completed
        first = self.first_timestamp
        return first is not None and timestamp < first

    def pending_replace_timestamps(self) -> frozenset[str]:
        return frozenset(i.timestamp for i in self.pending() if i.action in REPLACE_ACTIONS)

    @property
    def last_time(self) -> str | None:
        """The greatest time the timeline mentions, requested or completion: new instants go after it."""
        times = [i.timestamp for i in self.instants]
        times += [i.completion_time for i in self.instants if i.completion_time]
        return max(times) if times else None


def new_instant_time(now: datetime, after: str | None) -> str:
    """A 17-digit instant time for ``now`` that sorts strictly after ``after`` (as Hudi compares them:
    as strings), since our clock can lag the clock of whoever wrote the last instant."""
    candidate = _format_instant(now)
    if after is not None and candidate <= after:
        # One millisecond after ``after``, as a real date: Hudi parses instant times as dates.
        last = datetime.strptime(after.ljust(17, "0")[:17], INSTANT_FORMAT)
        candidate = _format_instant(last + timedelta(milliseconds=1))
    return candidate


def _format_instant(moment: datetime) -> str:
    return moment.strftime(INSTANT_FORMAT)[:17]
