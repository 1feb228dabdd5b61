"""What a Spark run would take on a cluster, projected from its event log on one machine.

On one machine the number of executors hides how a job is split: two cores run four tasks or four hundred
in about the same time. Spark's event log says how it was split: every stage's tasks, each task's time and
the rows it read and wrote. A cluster of E executors (one core each) runs a stage in at least its longest
task and at least its tasks' total time over E; stages run one after another. So a run's wall time on E
executors is projected as the sum over its stages of max(largest task, total / E): what the tasks cost,
with the machine's own speed, laid on a wider cluster. What the driver does between stages is left out
(it does not shrink with executors).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXECUTORS = (8, 64, 512)


@dataclass(frozen=True)
class Task:
    seconds: float  # from launch to finish
    cpu_seconds: float
    rows_read: int  # from files, and from a shuffle
    rows_written: int  # to files

    @property
    def rows(self) -> int:
        """The rows it handled: what it wrote, or for a task writing none, what it read."""
        return self.rows_written or self.rows_read


@dataclass
class Stage:
    stage_id: int
    name: str = ""
    tasks: list[Task] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return sum(t.seconds for t in self.tasks)

    @property
    def longest(self) -> float:
        return max((t.seconds for t in self.tasks), default=0.0)

    @property
    def writes(self) -> bool:
        return any(t.rows_written for t in self.tasks)

    def projected(self, executors: int) -> float:
        return max(self.longest, self.seconds / executors)


@dataclass(frozen=True)
class Run:
    """One run's stages, in the order they ran."""

    stages: tuple[Stage, ...]

    @classmethod
    def read(cls, folder: Path) -> Run:
        """The stages of every event log under ``folder`` (a run of one application writes one file; one
        still ``.inprogress``, as when the application ends without stopping its session, reads alike).
        Failed and speculative attempts count: they took the cluster's time too."""
        stages: dict[tuple[str, int], Stage] = {}
        for log in sorted(folder.iterdir()):
            for line in log.open():
                event = json.loads(line)
                kind = event.get("Event")
                if kind == "SparkListenerTaskEnd":
                    stage = stages.setdefault((log.name, event["Stage ID"]), Stage(event["Stage ID"]))
                    stage.tasks.append(_task(event))
                elif kind == "SparkListenerStageCompleted":
                    info = event["Stage Info"]
                    stage = stages.setdefault((log.name, info["Stage ID"]), Stage(info["Stage ID"]))
                    stage.name = info.get("Stage Name", "")
        return cls(tuple(stages.values()))

    @property
    def task_seconds(self) -> float:
        return sum(s.seconds for s in self.stages)

    @property
    def tasks(self) -> list[Task]:
        return [t for s in self.stages for t in s.tasks]

    def write_tasks(self) -> list[Task]:
        """The tasks of the stages that wrote files: the rewrite itself."""
        return [t for s in self.stages if s.writes for t in s.tasks]

    def projected(self, executors: int) -> float:
        return sum(s.projected(executors) for s in self.stages)


def _task(event: dict[str, Any]) -> Task:
    info = event["Task Info"]
    metrics = event.get("Task Metrics") or {}
    read = (metrics.get("Input Metrics") or {}).get("Records Read", 0)
    shuffled = (metrics.get("Shuffle Read Metrics") or {}).get("Total Records Read", 0)
    written = (metrics.get("Output Metrics") or {}).get("Records Written", 0)
    return Task(
        seconds=(info["Finish Time"] - info["Launch Time"]) / 1000,
        cpu_seconds=metrics.get("Executor CPU Time", 0) / 1e9,
        rows_read=read + shuffled,
        rows_written=written,
    )


@dataclass(frozen=True)
class Projection:
    """A run, as a cluster would see it: the rewrite's tasks, its largest against one new bucket's share,
    and the projected wall time for each executor count."""

    tasks: int  # the tasks that wrote files
    largest_rows: int
    median_rows: float
    bucket_share: float  # the rows of one new bucket, on average
    task_seconds: float  # every task of the run
    projected: dict[int, float]  # executors -> seconds

    @classmethod
    def of(cls, run: Run, rows: int, new_buckets: int, executors: Iterable[int] = EXECUTORS) -> Projection:
        """``rows`` rewritten into ``new_buckets`` new buckets."""
        written = [t.rows for t in run.write_tasks()] or [0]
        return cls(
            tasks=len(run.write_tasks()),
            largest_rows=max(written),
            median_rows=statistics.median(written),
            bucket_share=rows / new_buckets,
            task_seconds=run.task_seconds,
            projected={e: run.projected(e) for e in executors},
        )

    @property
    def largest_in_shares(self) -> float:
        """The largest task's rows in new buckets' shares: the target is at most 2."""
        return self.largest_rows / self.bucket_share if self.bucket_share else 0.0

    def spread(self, executors: int) -> float:
        """The projection against a perfect spread of the task time over ``executors``: at most 1.2 is the
        target at 64 (no task holds the cluster up)."""
        even = self.task_seconds / executors
        return self.projected[executors] / even if even else 0.0


def table(rows: Sequence[tuple[str, Projection]], executors: Sequence[int] = EXECUTORS) -> str:
    """A Markdown table of projections by path."""
    head = ["path", "write tasks", "largest / median rows", "largest in new buckets' shares",
            "task time (s)", *(f"{e} executors (s)" for e in executors), "64: against an even spread"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, p in rows:
        cells = [
            name,
            str(p.tasks),
            f"{p.largest_rows:,} / {p.median_rows:,.0f}",
            f"{p.largest_in_shares:.1f}",
            f"{p.task_seconds:.1f}",
            *(f"{p.projected[e]:.1f}" for e in executors),
            f"{p.spread(64):.2f}" if 64 in p.projected else "",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
