"""Hudi's writer heartbeat: how a live writer tells others that its pending instant is not a leftover.

A writer keeps an empty file ``.hoodie/.heartbeat/<instant>`` for each instant it is writing, rewriting
it every ``interval`` while it works and deleting it when done; the file's modification time is its last
beat. Another writer may roll a pending instant back only once its heartbeat has expired: no beat for
longer than ``interval * tolerable_misses`` (Hudi's defaults: 60 s and 2, the
``hoodie.client.heartbeat.*`` settings), or no heartbeat file at all. Hudi's writers with the lazy
failed-writes cleaning policy follow this rule; with the eager policy (Hudi's default) they roll back
every pending write instant when they start, live or not.
"""

from __future__ import annotations

from dataclasses import dataclass

HEARTBEAT_FOLDER = ".hoodie/.heartbeat"


@dataclass(frozen=True)
class Liveness:
    """How often a live writer beats, and how many beats may be missed before it counts as dead."""

    interval_s: float = 60.0
    tolerable_misses: int = 2

    @property
    def timeout_ms(self) -> int:
        return int(self.interval_s * self.tolerable_misses * 1000)

    def expired(self, last_beat_ms: int | None, now_ms: int) -> bool:
        """Whether an instant whose last beat was at ``last_beat_ms`` (None: no heartbeat file) is dead."""
        return last_beat_ms is None or now_ms - last_beat_ms > self.timeout_ms


def heartbeat_path(instant: str) -> str:
    return f"{HEARTBEAT_FOLDER}/{instant}"
