"""The work queue: a key waits once, is never worked on twice at once, failures back off per key."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import pytest_asyncio

from hudi_bucket_operator.runtime.workqueue import WorkQueue

pytestmark = pytest.mark.asyncio


class Work:
    """Records each call; ``gate`` holds every call until set; ``fail`` says which calls raise."""

    def __init__(self, fail: Callable[[str, int], bool] = lambda key, n: False) -> None:
        self.calls: list[str] = []
        self.active: set[str] = set()
        self.most_at_once = 0
        self.overlapped = False
        self.gate = asyncio.Event()
        self.gate.set()
        self.fail = fail

    async def __call__(self, key: str) -> None:
        self.overlapped |= key in self.active
        self.active.add(key)
        self.most_at_once = max(self.most_at_once, len(self.active))
        self.calls.append(key)
        try:
            await self.gate.wait()
            await asyncio.sleep(0.001)
            if self.fail(key, self.calls.count(key)):
                raise RuntimeError(f"{key} failed")
        finally:
            self.active.discard(key)


@pytest_asyncio.fixture
async def queue_of() -> AsyncIterator[Callable[..., WorkQueue[str]]]:
    queues: list[WorkQueue[str]] = []

    def make(work: Work, **options: Any) -> WorkQueue[str]:
        queue = WorkQueue(work, **options)
        queue.start()
        queues.append(queue)
        return queue

    yield make
    for queue in queues:
        await queue.stop()


async def drained(queue: WorkQueue[str]) -> None:
    for _ in range(1000):
        if not len(queue):
            return
        await asyncio.sleep(0.002)
    raise AssertionError("not drained")


async def test_a_key_added_many_times_while_it_waits_is_worked_on_once(queue_of: Any) -> None:
    work = Work()
    work.gate.clear()
    queue = queue_of(work, workers=1)
    queue.add("busy")
    await asyncio.sleep(0.01)  # "busy" is taken; "t" waits behind it
    for _ in range(50):
        queue.add("t")
    work.gate.set()
    await drained(queue)
    assert work.calls == ["busy", "t"]


async def test_a_key_added_while_worked_on_is_worked_on_again_afterwards_never_at_once(queue_of: Any) -> None:
    work = Work()
    work.gate.clear()
    queue = queue_of(work, workers=4)
    queue.add("t")
    await asyncio.sleep(0.01)
    queue.add("t")
    queue.add("t")
    work.gate.set()
    await drained(queue)
    assert work.calls == ["t", "t"]
    assert not work.overlapped


async def test_no_more_keys_are_worked_on_at_once_than_there_are_workers(queue_of: Any) -> None:
    work = Work()
    queue = queue_of(work, workers=3)
    for i in range(30):
        queue.add(f"t{i}")
    await drained(queue)
    assert len(work.calls) == 30
    assert work.most_at_once == 3


async def test_a_failing_key_is_retried_with_growing_delays_until_it_succeeds(queue_of: Any) -> None:
    work = Work(fail=lambda key, n: n < 4)
    queue = queue_of(work, workers=2, base_delay=0.01)
    started = asyncio.get_running_loop().time()
    queue.add("t")
    for _ in range(500):
        if work.calls.count("t") == 4 and not len(queue):
            break
        await asyncio.sleep(0.005)
    assert work.calls.count("t") == 4
    assert asyncio.get_running_loop().time() - started >= 0.01 + 0.02 + 0.04


async def test_a_key_failing_six_times_in_a_row_succeeds_within_a_second(queue_of: Any) -> None:
    """The default backoff starts at controller-runtime's 5 ms: a cause that clears in a second or two
    (a new CRD an admission plugin does not know yet, while events and resyncs keep adding the key) is
    not waited out for half a minute, as a half-second start made it after six failures."""
    work = Work(fail=lambda key, n: n <= 6)
    queue = queue_of(work)
    loop = asyncio.get_running_loop()
    started = loop.time()
    queue.add("t")
    while work.calls.count("t") < 7 or len(queue):
        assert loop.time() - started < 1.0, f"{work.calls.count('t')} passes in a second"
        await asyncio.sleep(0.01)


async def test_forgetting_a_key_cancels_its_retry(queue_of: Any) -> None:
    work = Work(fail=lambda key, n: True)
    queue = queue_of(work, workers=1, base_delay=0.05)
    queue.add("gone")
    await drained(queue)
    queue.forget("gone")
    await asyncio.sleep(0.15)
    assert work.calls == ["gone"]


async def test_an_expected_failure_is_logged_in_one_line_any_other_with_its_traceback(
    queue_of: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """An API server's answer (a new CRD its admission plugins do not know yet, a 403) is the cluster's
    state: one line naming it, then a retry; a failure of the code itself keeps its traceback."""

    class AnsweredError(RuntimeError):
        pass

    async def work(key: str) -> None:
        if len([r for r in caplog.records if key in r.getMessage()]) < 1:
            raise (AnsweredError if key == "api" else KeyError)(f"{key}: no RESTMapping yet")

    queue = queue_of(work, base_delay=0.001, expected=(AnsweredError,))
    caplog.set_level("ERROR")
    queue.add("api")
    queue.add("bug")
    await drained(queue)
    [api] = [r for r in caplog.records if "api" in r.getMessage()]
    [bug] = [r for r in caplog.records if "bug" in r.getMessage()]
    assert "failed (1 in a row): api: no RESTMapping yet; retrying in" in api.getMessage()
    assert api.exc_info is None
    assert bug.exc_info is not None
    assert bug.exc_info[0] is KeyError
