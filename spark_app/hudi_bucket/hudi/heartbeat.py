"""Beating Hudi's heartbeat for our own instants, and reading the heartbeats of pending ones.

``beating`` keeps the heartbeat file of an instant fresh from a daemon thread for as long as the block
runs (the first beat is written before the block starts, as Hudi writes it before requesting its
instant), then deletes it. A process killed outright leaves its file behind, which then goes stale.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from hudi_bucket.core.heartbeat import HEARTBEAT_FOLDER, Liveness, heartbeat_path
from hudi_bucket.storage.base import Storage


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def last_beats(storage: Storage) -> dict[str, int]:
    """The last beat of every instant with a heartbeat file, by instant."""
    return {info.name: info.modified_ms for info in storage.list(HEARTBEAT_FOLDER) if not info.is_dir}


@contextmanager
def beating(storage: Storage, instant: str, liveness: Liveness) -> Iterator[None]:
    """Keep ``instant``'s heartbeat alive while the block runs."""
    path = heartbeat_path(instant)
    storage.write(path, b"", overwrite=True)
    done = threading.Event()

    def beat() -> None:
        while not done.wait(liveness.interval_s):
            storage.write(path, b"", overwrite=True)

    beater = threading.Thread(target=beat, name=f"heartbeat-{instant}", daemon=True)
    beater.start()
    try:
        yield
    finally:
        done.set()
        beater.join()
        storage.delete(path)
