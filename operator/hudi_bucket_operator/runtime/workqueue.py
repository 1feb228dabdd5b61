"""A de-duplicating work queue of keys, worked by a bounded pool of asyncio workers.

The shape of controller-runtime's workqueue: a key waits in the queue at most once however often it is
added; a key is never worked on by two workers at once (added while it is being worked on, it is worked
on again right after); a failed key is retried after a per-key exponential backoff, which a success
resets. Events of tables and of their jobs only add keys, so a burst of events costs one reconcile per
table, and the pool bounds how many reconciles (and API calls) are in flight.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
logger = logging.getLogger(__name__)


class WorkQueue(Generic[K]):
    def __init__(
        self,
        work: Callable[[K], Awaitable[None]],
        workers: int = 8,
        base_delay: float = 0.005,
        max_delay: float = 300.0,
        expected: tuple[type[Exception], ...] = (),
    ) -> None:
        # controller-runtime's per-item base: events and resyncs add a failing key too, and each of those
        # passes counts, so a cause that clears in a second or two (an admission plugin that does not know
        # a new CRD yet) has often failed eight times by then; from 5 ms that is a 0.6 s wait, not a minute.
        self._work = work
        # Failures that are the world's state, not a fault of the code (an API server's answer): logged in
        # one line, their message, without a traceback; any other failure is logged with its traceback.
        self._expected = expected
        self._workers = workers
        self._base_delay = base_delay
        self._max_delay = max_delay
        self._queue: asyncio.Queue[K] = asyncio.Queue()
        self._waiting: set[K] = set()  # in the queue, not yet taken
        self._active: set[K] = set()  # being worked on
        self._again: set[K] = set()  # added while being worked on: once more afterwards
        self._failures: dict[K, int] = {}
        self._timers: dict[K, asyncio.TimerHandle] = {}
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def started(self) -> bool:
        return bool(self._tasks)

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._worker(), name=f"workqueue-{i}") for i in range(self._workers)
        ]

    async def stop(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []

    def add(self, key: K) -> None:
        if key in self._active:
            self._again.add(key)
        elif key not in self._waiting:
            self._waiting.add(key)
            self._queue.put_nowait(key)

    def add_after(self, key: K, delay: float) -> None:
        """Add ``key`` in ``delay`` seconds (an earlier pending add_after of it is kept)."""
        if key not in self._timers:
            loop = asyncio.get_running_loop()
            self._timers[key] = loop.call_later(delay, self._fire, key)

    def forget(self, key: K) -> None:
        """Drop the key's backoff and pending retry (its object is gone)."""
        self._failures.pop(key, None)
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()

    def __len__(self) -> int:
        return len(self._waiting) + len(self._active)

    def _fire(self, key: K) -> None:
        self._timers.pop(key, None)
        self.add(key)

    async def _worker(self) -> None:
        while True:
            key = await self._queue.get()
            self._waiting.discard(key)
            self._active.add(key)
            try:
                await self._work(key)
            except asyncio.CancelledError:
                raise
            except Exception as err:
                failures = self._failures.get(key, 0) + 1
                self._failures[key] = failures
                delay = min(self._base_delay * 2 ** (failures - 1), self._max_delay)
                if isinstance(err, self._expected):
                    logger.error(
                        "reconciling %s failed (%d in a row): %s; retrying in %.1f s",
                        key,
                        failures,
                        err,
                        delay,
                    )
                else:
                    logger.exception(
                        "reconciling %s failed (%d in a row); retrying in %.1f s", key, failures, delay
                    )
                self.add_after(key, delay)
            else:
                self._failures.pop(key, None)
            finally:
                self._active.discard(key)
            if key in self._again:
                self._again.discard(key)
                self.add(key)
