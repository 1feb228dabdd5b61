"""A live job is not a crashed one. While our `apply` runs (paused inside its rewrite), another command
of ours, or Apache Hudi's writer, starts on the same table; each scenario ends with a consistent table
(one record per key, every record in its bucket, nothing pending) and a clear message from the loser.

- our `write` or a second `apply`: refused, since the running apply's instant is pending and its
  heartbeat alive; the apply completes;
- Hudi with lazy failed-writes cleaning: it leaves our instant alone (live heartbeat) and commits to a
  partition we do not rewrite; both complete;
- Hudi with eager failed-writes cleaning (its default): it rolls our instant back when it starts and
  commits; our apply notices before completing, removes what it wrote and says what happened;
- a killed job's heartbeat: refused while fresh, rolled back once expired.

And before it: a plan approved while Hudi's writer runs still applies after the writer committed more.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hudi_bucket.commands import apply as apply_module
from hudi_bucket.commands.apply import apply
from hudi_bucket.commands.write import write
from hudi_bucket.contract.requests import ApplyOptions, WriteOptions
from hudi_bucket.core.heartbeat import HEARTBEAT_FOLDER, Liveness
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.errors import AnotherJobRunningError, RolledBackByAnotherWriterError
from hudi_bucket.planning import plan
from hudi_bucket.spark.context import TableContext
from lib.bucket_tables import verified
from lib.crashes import Crash, crash
from lib.hudi_spark import hudi_write
from lib.hudi_tables import HudiBucketTables, one_record_per_key, records

pytestmark = pytest.mark.spark

RULES = ApplyOptions(BucketRules.parse("day=2025-11-1[01],8", 2))  # 10 and 11 rewritten, 12 and 13 not


def during_rewrite(monkeypatch: pytest.MonkeyPatch, intruder: Callable[[], None]) -> None:
    """Run ``intruder`` while our apply is between its rewrite and its completion."""
    real = apply_module.rewrite_partitions

    def rewrite_then_intrude(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        intruder()
        return result

    monkeypatch.setattr(apply_module, "rewrite_partitions", rewrite_then_intrude)


@pytest.fixture
def table(hudi_tables: HudiBucketTables, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "live"
    return root, hudi_tables.copy(root, 9)


def our_write(spark: Any, root: Path) -> None:
    write(spark, str(root), WriteOptions(source=""), rows=records(spark, range(0, 5), 9))


def our_second_apply(spark: Any, root: Path) -> None:
    apply(TableContext.open(spark, str(root)), ApplyOptions(BucketRules.parse("x,3", 3)))


@pytest.mark.parametrize("command", [our_write, our_second_apply])
def test_our_commands_during_our_apply_are_refused(
    spark: Any, table: Any, monkeypatch: pytest.MonkeyPatch, command: Callable[[Any, Path], None]
) -> None:
    root, _ = table
    before = one_record_per_key(spark, root)
    refusals: list[str] = []

    def intrude() -> None:
        with pytest.raises(AnotherJobRunningError, match="another hudi-bucket-job is writing") as refused:
            command(spark, root)
        refusals.append(str(refused.value))

    during_rewrite(monkeypatch, intrude)
    result = apply(TableContext.open(spark, str(root)), RULES)

    assert result.instant in refusals[0]  # the message names the live instant, and its last heartbeat
    assert "last heartbeat" in refusals[0]
    assert one_record_per_key(spark, root) == before
    assert verified(TableContext.open(spark, str(root)))


def test_a_lazy_hudi_writer_leaves_our_live_apply_alone(
    spark: Any, table: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, options = table
    lazy = {**options, "hoodie.cleaner.policy.failed.writes": "LAZY"}
    during_rewrite(monkeypatch, lambda: hudi_write(spark, root, records(spark, range(202, 260, 4), 7), lazy))
    result = apply(TableContext.open(spark, str(root)), RULES)  # Hudi wrote to day 12 only

    assert result.instant
    rows = one_record_per_key(spark, root)
    assert len(rows) == 100 + len(range(202, 260, 4))
    assert verified(TableContext.open(spark, str(root)))


def test_an_eager_hudi_writer_rolls_our_apply_back_and_we_say_so(
    spark: Any, table: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, options = table
    during_rewrite(monkeypatch, lambda: hudi_write(spark, root, records(spark, range(90, 110), 7), options))
    with pytest.raises(RolledBackByAnotherWriterError, match="rolled back by another writer") as lost:
        apply(TableContext.open(spark, str(root)), RULES)

    ctx = TableContext.open(spark, str(root))
    assert ctx.table.timeline.pending() == ()
    assert len(one_record_per_key(spark, root)) == 110
    [ours] = re.findall(r"instant (\d{17})", str(lost.value))
    assert not [f for f in root.rglob("*") if ours in f.name]  # no file of ours is left behind
    assert verified(ctx)
    monkeypatch.undo()
    assert apply(ctx, RULES).instant  # and the rescale goes through once the writer is done


def test_an_approved_plan_still_applies_after_a_writer_committed_since(spark: Any, table: Any) -> None:
    """Planned and approved while the writers run: their later commits (updates and new keys in the
    partitions the plan rewrites) change no part of the rewrite, so the approval holds, and the apply
    rewrites what they wrote."""
    root, options = table
    planned, _ = plan(TableContext.open(spark, str(root)), RULES)
    hudi_write(spark, root, records(spark, range(90, 120), 7), options)  # every day: 10 and 11 too

    ctx = TableContext.open(spark, str(root))
    result = apply(ctx, replace(RULES, approved_plan=planned.plan_id))

    assert result.instant
    assert result.plan.id == planned.plan_id
    assert result.plan.base_instant != planned.base_instant  # shown, not hashed
    assert len(one_record_per_key(spark, root)) == 120
    assert verified(ctx.reload())


def test_a_killed_jobs_heartbeat_is_waited_out(
    spark: Any, table: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = table
    # Expires 3 s after the last beat: long enough that the refusal below holds on a loaded machine.
    quick = Liveness(interval_s=1.5, tolerable_misses=2)
    ctx = replace(TableContext.open(spark, str(root)), liveness=quick)
    with monkeypatch.context() as crashing:
        crash(crashing, "mid-data, after some files were written")
        with pytest.raises(Crash):
            apply(ctx, RULES)
    [pending] = ctx.reload().table.timeline.pending()
    (root / HEARTBEAT_FOLDER / pending.timestamp).write_bytes(b"")  # what a killed process leaves

    with pytest.raises(AnotherJobRunningError, match=pending.timestamp):
        apply(ctx.reload(), RULES)
    time.sleep(3.2)
    result = apply(ctx.reload(), RULES)
    assert f"rolled back our unfinished rescale {pending.timestamp}" in result.notes
    assert verified(ctx)
