"""Sizing end to end on a generated table whose days span 100x in size: one sized apply brings every
touched partition's files within tolerance of the target, and the next plan proposes nothing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_bucket.commands.apply import apply
from hudi_bucket.commands.write import write
from hudi_bucket.contract.requests import ApplyOptions, WriteOptions
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.core.sizing import SizingPolicy, measure
from hudi_bucket.planning import plan, sized_plan
from hudi_bucket.spark.context import TableContext
from lib.bucket_tables import live_groups, no_bloom_filters, verified
from lib.hudi_spark import data_rows, hudi_read, hudi_rs_rows

pytestmark = pytest.mark.spark

# Ten quiet-to-busy days, each about 1.67x the one before (600 to 60,000 orders), and a sale day that an
# explicit rule gives 16 buckets, whatever its size.
DAYS = {f"day=2025-11-{d:02d}": round(600 * 100 ** ((d - 1) / 9)) for d in range(1, 11)}
SALE = "day=2025-11-11"
EXPLICIT = BucketRules.parse(r"^day=2025-11-11$,16", 4)
TOLERANCE = 2.0


def orders(path: Path) -> None:
    rng = np.random.default_rng(16)
    counts = {**DAYS, SALE: 5000}
    days = rng.permutation(np.repeat([p.removeprefix("day=") for p in counts], list(counts.values())))
    rows = len(days)
    pq.write_table(
        pa.table(
            {
                # Random keys: "ORD-00012345" style keys hash unevenly under power-of-two counts, as
                # Java's String.hashCode modulo 2^k is an alternating sum of the characters (31 = -1).
                "order_id": [str(uuid.UUID(bytes=rng.bytes(16))) for _ in range(rows)],
                "customer_id": rng.integers(1, 50_000, size=rows),
                "amount": np.round(rng.gamma(2.0, 30.0, size=rows), 2),
                "day": pa.array(days),
                "updated_at": rng.integers(1_700_000_000_000, 1_760_000_000_000, size=rows),
            }
        ),
        path,
    )


@pytest.fixture(scope="module", autouse=True)
def without_bloom_filters() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch, no_bloom_filters(patch):
        yield


@pytest.fixture(scope="module")
def skewed(spark, tmp_path_factory, without_bloom_filters) -> Path:
    """A plain bucket-index table, 4 buckets in every day, written by our `write` job."""
    folder = tmp_path_factory.mktemp("sizing")
    orders(folder / "orders.parquet")
    options = WriteOptions(
        source=str(folder / "orders.parquet"),
        record_key=("order_id",),
        partition_fields=("day",),
        ordering_field="updated_at",
        create=True,
        hive_style=True,
        default_buckets=4,
    )
    write(spark, str(folder / "orders"), options)
    return folder / "orders"


def largest_files(root: Path) -> dict[str, int]:
    return {p: measure(p, None, groups).largest_file or 0 for p, groups in live_groups(root).items()}


def test_one_sized_apply_brings_every_day_within_tolerance_and_the_next_plan_is_empty(spark, skewed) -> None:
    before = {p: measure(p, 4, groups) for p, groups in live_groups(skewed).items()}
    assert before[max(DAYS)].bytes > 50 * before[min(DAYS)].bytes  # the days do span about 100x
    # The quietest day's 4 files hold a quarter of the target each: it merges into 1, the busiest day
    # grows to about 100 buckets, and a few days in between are already near the target.
    target = before[min(DAYS)].bytes
    policy = SizingPolicy(target, partitions="^day=", tolerance=TOLERANCE)
    options = ApplyOptions(EXPLICIT, current_buckets=4, sizing=policy)
    ctx = TableContext.open(spark, str(skewed))

    proposed, _, sizing = sized_plan(ctx, options)
    assert sizing is not None
    assert {c.partition for c in sizing.choices} == set(DAYS)  # the sale day is the explicit rule's
    assert proposed.desired.rules[0] == EXPLICIT.rules[0]  # explicit rules first: they win
    touched = {c.partition: c for c in proposed.changes}
    kept = set(DAYS) - set(touched) - {SALE}
    assert touched[SALE].new_buckets == 16
    assert touched[min(DAYS)].new_buckets == 1
    assert kept, "some days are within tolerance at 4 buckets already"
    shuffle_free = [p for p, c in touched.items() if c.shuffle_free and p != SALE]
    print(
        f"\nsizing to {target} bytes: {len(touched) - 1} of {len(DAYS)} days resized, {len(shuffle_free)} shuffle-free"
    )
    for c in sizing.choices:
        print(f"  {c.partition}: {c.bytes:>9} bytes, {c.old_buckets} -> {c.new_buckets} ({c.verdict})")
    print("  rules:", proposed.desired.render())

    rows = hudi_rs_rows(skewed)
    result = apply(ctx, options)
    assert result.instant is not None
    assert result.plan == proposed.reported()
    assert verified(ctx)
    assert hudi_rs_rows(skewed) == rows  # hudi-rs and Apache Hudi read the same rows after the rewrite
    assert data_rows(hudi_read(spark, skewed)) == rows

    after = largest_files(skewed)
    for partition in DAYS:
        largest = after[partition] if partition in touched else before[partition].largest_file
        assert target / TOLERANCE <= largest <= target * TOLERANCE, (partition, largest, target)
    assert (
        len(shuffle_free) == len(touched) - 1
    )  # from 4 buckets, every count chosen was a multiple or divisor
    again, _ = plan(ctx.reload(), options)
    assert again.is_noop, again.to_dict()
