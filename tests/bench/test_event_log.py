"""The cluster projection reads what Spark's event log says of each task, and projects stage by stage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from event_log import Projection, Run, table


def task_end(
    stage: int, launch: int, finish: int, *, read: int = 0, shuffled: int = 0, written: int = 0
) -> str:
    return json.dumps(
        {
            "Event": "SparkListenerTaskEnd",
            "Stage ID": stage,
            "Task Info": {"Launch Time": launch, "Finish Time": finish},
            "Task Metrics": {
                "Executor CPU Time": (finish - launch) * 500_000,
                "Input Metrics": {"Records Read": read},
                "Shuffle Read Metrics": {"Total Records Read": shuffled},
                "Output Metrics": {"Records Written": written},
            },
        }
    )


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """A scan of 4 tasks (1 s each) feeding a shuffle, then a write of 4 tasks, one holding half the rows."""
    lines = [task_end(0, 0, 1000, read=250) for _ in range(4)]
    lines.append(
        json.dumps(
            {"Event": "SparkListenerStageCompleted", "Stage Info": {"Stage ID": 0, "Stage Name": "scan"}}
        )
    )
    lines += [task_end(1, 1000, 9000, shuffled=500, written=500)]
    lines += [task_end(1, 1000, 3000, shuffled=rows, written=rows) for rows in (200, 200, 100)]
    (tmp_path / "local-1.inprogress").write_text("\n".join(lines) + "\n")
    return tmp_path


def test_a_run_is_its_stages_tasks_with_their_time_and_rows(log: Path) -> None:
    run = Run.read(log)
    assert [(s.stage_id, len(s.tasks), s.seconds, s.longest) for s in run.stages] == [
        (0, 4, 4.0, 1.0),
        (1, 4, 14.0, 8.0),
    ]
    assert run.stages[0].name == "scan"
    assert [t.rows for t in run.write_tasks()] == [500, 200, 200, 100]
    assert run.task_seconds == 18.0


def test_each_stage_takes_its_longest_task_or_its_share_of_the_executors_whichever_is_more(log: Path) -> None:
    run = Run.read(log)
    assert run.projected(1) == 18.0  # every task one after another
    assert run.projected(2) == 2.0 + 8.0  # the scan spread; the write held up by its largest task
    assert run.projected(64) == 1.0 + 8.0


def test_the_projection_says_the_largest_task_in_new_buckets_shares(log: Path) -> None:
    projection = Projection.of(Run.read(log), rows=1000, new_buckets=8)
    assert (projection.tasks, projection.largest_rows, projection.median_rows) == (4, 500, 200)
    assert projection.largest_in_shares == 4.0  # one new bucket holds 125 rows; the largest task 500
    assert projection.spread(64) == pytest.approx(9.0 / (18.0 / 64))
    assert "| split | 4 | 500 / 200 | 4.0 | 18.0 |" in table([("split", projection)])
