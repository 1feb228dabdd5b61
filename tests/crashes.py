"""Points where an `apply` can die, for crash tests: each patches the step after which the process is
gone (nothing after it runs, our rollback handler included, which the test disables)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hudi_bucket.hudi.timeline_io import TimelineStore
from hudi_bucket.jobs import instants


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


@crash_point("mid-data, after some files moved into place")
def _mid_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first move completes, every later one dies (on an object store moves run in parallel, so
    some may be under way when the first crash is raised)."""
    from hudi_bucket.storage.hadoop import HadoopStorage
    from hudi_bucket.storage.local import LocalStorage

    moved: list[str] = []
    for backend in (LocalStorage, HadoopStorage):
        real_rename = backend.rename

        def rename_then_crash(self: object, src: str, dst: str, real: Callable = real_rename) -> None:
            if moved:
                raise Crash
            moved.append(dst)
            real(self, src, dst)

        monkeypatch.setattr(backend, "rename", rename_then_crash)


@crash_point("after the config was saved, before completion")
def _before_completion(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TimelineStore, "complete", _raise)
