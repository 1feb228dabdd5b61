"""How much faster the vectorised bucket ids are than a per-key Python loop over the scalar function.

Run: .venv/bin/python tests/bench/bench_bucket_ids.py   (about 30 seconds)

Each workload is one million random record keys: single-field keys, pure ASCII (the common case) or
with some non-ASCII characters, hashed wholly in numpy; and two-field complex keys, split with Arrow
(a few, whose values hold ',' or ':', in Python). Both paths are checked to agree first.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import numpy as np
import pyarrow as pa

from hudi_bucket.bucketing.bucket_batch import bucket_ids_for_record_keys
from hudi_bucket.core.buckets import record_key_bucket_id
from hudi_bucket.core.recordkeys import KeyStyle

KEYS = 1_000_000
NUM_BUCKETS = 64
HASH_FIELDS = ("id", "name")
ASCII = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
# Mostly ASCII, with some Latin, CJK and characters outside the BMP, and now and then a ',' or ':'.
MIXED = ASCII * 8 + "é中\U0001f600,:"


def random_keys(rng: random.Random, characters: str, complex_keys: bool) -> list[str]:
    def text() -> str:
        return "".join(rng.choices(characters, k=rng.randrange(4, 24)))

    if complex_keys:  # no ':' in the last value: Hudi 1.x could not split such a key (see recordkeys)
        return [f"id:{text()},name:{text().replace(':', '')}" for _ in range(KEYS)]
    return [text() for _ in range(KEYS)]


def seconds(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def bench(label: str, keys: list[str]) -> None:
    column = pa.array(keys, pa.string())
    vectorised = bucket_ids_for_record_keys(column, HASH_FIELDS, NUM_BUCKETS, KeyStyle.HUDI_1X)
    sample = range(0, KEYS, 997)
    assert all(vectorised[i] == record_key_bucket_id(keys[i], HASH_FIELDS, NUM_BUCKETS) for i in sample)

    vector_s = min(
        seconds(lambda: bucket_ids_for_record_keys(column, HASH_FIELDS, NUM_BUCKETS, KeyStyle.HUDI_1X))
        for _ in range(3)
    )
    loop_s = seconds(lambda: [record_key_bucket_id(key, HASH_FIELDS, NUM_BUCKETS) for key in keys])
    print(
        f"{label:<26} vectorised {KEYS / vector_s:>12,.0f} keys/s   "
        f"scalar loop {KEYS / loop_s:>10,.0f} keys/s   ratio {loop_s / vector_s:>6.1f}x"
    )


def main() -> None:
    rng = random.Random(1)
    print(
        f"{KEYS:,} keys per workload, {NUM_BUCKETS} buckets, numpy {np.__version__}, pyarrow {pa.__version__}"
    )
    bench("single-field keys, ASCII", random_keys(rng, ASCII, complex_keys=False))
    bench("single-field keys, mixed", random_keys(rng, MIXED.replace(":", ""), complex_keys=False))
    bench("two-field complex keys", random_keys(rng, MIXED, complex_keys=True))


if __name__ == "__main__":
    main()
