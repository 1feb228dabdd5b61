"""Shuffle routing keys: each bucket file to a task of its own, by Spark's own hash (its values checked
against Spark in tests/jobs/test_shuffle_routing.py)."""

from __future__ import annotations

import pytest

from hudi_bucket.core.routing import routing_keys, shuffle_width, task_of


@pytest.mark.parametrize(("files", "tasks"), [(1, 1), (12, 12), (256, 256), (1000, 500), (7, 3)])
def test_each_file_is_routed_to_its_position_modulo_the_tasks(files: int, tasks: int) -> None:
    keys = routing_keys(files, tasks)
    assert [task_of(key, tasks) for key in keys] == [p % tasks for p in range(files)]


@pytest.mark.parametrize(
    ("files", "partitions", "width"),
    [(12, 200, 12), (200, 200, 200), (1000, 200, 500), (1000, 800, 800), (0, 200, 1)],
)
def test_a_shuffle_runs_a_task_a_file_and_never_more_than_two_files_a_task(
    files: int, partitions: int, width: int
) -> None:
    assert shuffle_width(files, partitions) == width
    assert files <= 2 * width
