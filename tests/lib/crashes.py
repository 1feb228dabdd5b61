"""Points where an `apply` can die, for crash tests: each patches the step after which the process is
gone (nothing after it runs, our rollback handler included, which the test disables)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from hudi_bucket.hudi.timeline_io import TimelineStore
from hudi_bucket.writing import instants


class Crash(BaseException):
    """Stands for the process dying: nothing after it runs (our rollback handler is disabled too)."""


CRASH_POINTS: dict[str, Callable[[pytest.MonkeyPatch], None]] = {}


def crash_point(name: str) -> Callable:
    def register(fn: Callable[[pytest.MonkeyPatch], None]) -> Callable[[pytest.MonkeyPatch], None]:
        CRASH_POINTS[name] = fn
        return fn

    return register


def crash(monkeypatch: pytest.MonkeyPatch, point: str) -> None:
    """Make the next apply die at ``point``, leaving what a dead process leaves (no undo)."""
    monkeypatch.setattr(instants, "undo", lambda *_: None)
    CRASH_POINTS[point](monkeypatch)


def _raise(*_: object, **__: object) -> None:
    raise Crash


@crash_point("after the instant was requested")
def _after_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TimelineStore, "start", _raise)


@crash_point("mid-data, after some files were written")
def _mid_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spark writes one bucket file at its final name, then the process dies (the others never come)."""
    from pyspark.sql import functions as F  # noqa: N812

    from hudi_bucket.writing import direct_write

    real_write = direct_write.write

    def write_one_then_crash(spark: object, frame: Any, storage: object, files: Any) -> None:
        first = frame.select(direct_write.FILE_COLUMN).first()[0]
        real_write(spark, frame.where(F.col(direct_write.FILE_COLUMN) == first), storage, files)
        raise Crash

    monkeypatch.setattr(direct_write, "write", write_one_then_crash)


@crash_point("after the config was saved, before completion")
def _before_completion(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TimelineStore, "complete", _raise)
