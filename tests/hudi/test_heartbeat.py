"""Our heartbeat, as Hudi's writers keep and read theirs: an empty file per instant whose modification
time is the last beat, refreshed while the job runs and deleted when it ends."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hudi_bucket.core.heartbeat import HEARTBEAT_FOLDER, Liveness
from hudi_bucket.hudi.heartbeat import beating, last_beats
from hudi_bucket.storage import LocalStorage


def test_a_heartbeat_expires_after_the_tolerated_misses_or_when_missing() -> None:
    hudi_defaults = Liveness()
    assert hudi_defaults.timeout_ms == 120_000  # hoodie.client.heartbeat.interval_in_ms 60000, 2 misses
    assert not hudi_defaults.expired(1_000, 121_000)
    assert hudi_defaults.expired(1_000, 121_001)
    assert hudi_defaults.expired(None, 0)  # no heartbeat file: dead, as Hudi reads it


def test_beating_refreshes_the_file_while_the_block_runs_then_deletes_it(tmp_path: Path) -> None:
    storage = LocalStorage(tmp_path)
    with beating(storage, "20261123000000000", Liveness(interval_s=0.05)):
        first = last_beats(storage)["20261123000000000"]
        assert (tmp_path / HEARTBEAT_FOLDER / "20261123000000000").read_bytes() == b""
        deadline = time.monotonic() + 10  # a loaded machine may run the beating thread late
        while last_beats(storage)["20261123000000000"] == first and time.monotonic() < deadline:
            time.sleep(0.05)
        assert last_beats(storage)["20261123000000000"] > first
    assert last_beats(storage) == {}


def test_the_heartbeat_stops_when_the_block_fails(tmp_path: Path) -> None:
    storage = LocalStorage(tmp_path)
    with pytest.raises(RuntimeError), beating(storage, "20261123000000001", Liveness(interval_s=0.05)):
        raise RuntimeError("the job failed")
    assert last_beats(storage) == {}
