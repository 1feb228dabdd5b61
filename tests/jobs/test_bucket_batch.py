"""The vectorised bucket ids give, row for row, what the scalar path gives."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hudi_bucket.bucketing.bucket_batch import bucket_ids_for_record_keys
from hudi_bucket.core.buckets import FORMAT_MAX_BUCKETS, bucket_id, record_key_bucket_id
from hudi_bucket.core.recordkeys import KeyStyle
from hudi_bucket.errors import CorruptTableError, HudiBucketError, InvalidBucketCountError

# Arrow strings are UTF-8, so no lone surrogates; everything else, with the key separators and
# characters outside the BMP (two UTF-16 units each) drawn often.
key_chars = st.sampled_from(list(",:_-9aé中\U0001f600\U0010ffff")) | st.characters(codec="utf-8")
texts = st.text(key_chars, max_size=30)
fields = ["id", "name", "ts"]


@st.composite
def record_keys(draw: st.DrawFn) -> str:
    """A simple key, a complex key as a key generator writes it, or any text at all."""
    kind = draw(st.sampled_from(["simple", "complex", "any"]))
    if kind == "simple":
        return draw(texts.filter(lambda t: ":" not in t))
    if kind == "complex":
        pairs = draw(st.lists(st.tuples(st.sampled_from(fields), texts), min_size=1, max_size=4))
        return ",".join(f"{field}:{value or '__empty__'}" for field, value in pairs)
    return draw(texts)


@st.composite
def bucket_counts(draw: st.DrawFn, rows: int) -> int | np.ndarray:
    """One count for all rows, or one per row (including the 8-digit extreme)."""
    count = st.sampled_from([1, 2, 8, 97, FORMAT_MAX_BUCKETS]) | st.integers(1, FORMAT_MAX_BUCKETS)
    if draw(st.booleans()):
        return draw(count)
    return np.array(draw(st.lists(count, min_size=rows, max_size=rows)), dtype=np.int64)


def per_row(counts: int | np.ndarray, rows: int) -> list[int]:
    return [int(n) for n in np.broadcast_to(counts, (rows,))]


def scalar_record_key_buckets(
    keys: list[str], hash_fields: list[str], counts: int | np.ndarray, style: KeyStyle
) -> list[int]:
    return [
        record_key_bucket_id(key, hash_fields, n, style)
        for key, n in zip(keys, per_row(counts, len(keys)), strict=True)
    ]


@pytest.mark.parametrize("style", list(KeyStyle))
@given(
    keys=st.lists(record_keys(), max_size=40),
    hash_fields=st.lists(st.sampled_from(fields), unique=True),
    data=st.data(),
)
def test_record_keys_match_the_scalar_path(
    style: KeyStyle, keys: list[str], hash_fields: list[str], data: st.DataObject
) -> None:
    counts = data.draw(bucket_counts(len(keys)))
    try:
        expected = scalar_record_key_buckets(keys, hash_fields, counts, style)
    except HudiBucketError as scalar_error:
        with pytest.raises(type(scalar_error)):
            bucket_ids_for_record_keys(pa.array(keys, pa.string()), hash_fields, counts, style)
        return
    result = bucket_ids_for_record_keys(pa.array(keys, pa.string()), hash_fields, counts, style)
    assert result.tolist() == expected


TRICKY_KEYS = [
    "a:1,b:2",
    "id:1",
    "id:1,",
    ",id:1",
    "id:__null__,name:__empty__",
    "id:1,name:a1,1",
    "name:x,id:2",
    "id:,name:",
    ":1,:2",
]


@pytest.mark.parametrize("style", list(KeyStyle))
@pytest.mark.parametrize("hash_fields", [["id", "name"], ["name"], ["zz"], [], [""]])
def test_tricky_keys_match_the_scalar_path(style: KeyStyle, hash_fields: list[str]) -> None:
    result = bucket_ids_for_record_keys(pa.array(TRICKY_KEYS), hash_fields, 1000, style)
    assert result.tolist() == scalar_record_key_buckets(TRICKY_KEYS, hash_fields, 1000, style)


@pytest.mark.parametrize("style", list(KeyStyle))
def test_a_large_mixed_batch_matches_the_scalar_path(style: KeyStyle) -> None:
    rng = random.Random(7)
    pool = "abcXYZ0189 -_.,:é中\U0001f600\U0010ffff"

    def text() -> str:
        return "".join(rng.choice(pool) for _ in range(rng.randrange(0, 25)))

    keys = [
        text().replace(":", "") if rng.random() < 0.5 else f"id:{text()},name:{text().replace(':', '')}"
        for _ in range(20_000)
    ]
    counts = np.array([rng.choice([1, 8, 256, FORMAT_MAX_BUCKETS]) for _ in keys], dtype=np.int64)
    result = bucket_ids_for_record_keys(pa.array(keys), ["id", "name"], counts, style)
    assert result.tolist() == scalar_record_key_buckets(keys, ["id", "name"], counts, style)


def test_the_spec_check_vectors() -> None:
    keys = pa.array(["TXN-102", "id:1,name:a1,1"])
    assert bucket_ids_for_record_keys(keys, ["id", "name"], 8).tolist() == [7, 5]


def test_any_arrow_string_layout_gives_the_same_buckets() -> None:
    keys = ["TXN-102", "", "\U0001f600x", "id:1,name:a1,1", "é"]
    expected = bucket_ids_for_record_keys(pa.array(keys), ["id"], 97).tolist()
    layouts = [
        pa.array(keys, pa.large_string()),
        pa.array(keys, pa.string_view()),
        pa.chunked_array([keys[:2], keys[2:]], pa.string()),
        pa.array(["padding", *keys], pa.string()).slice(1),
    ]
    for layout in layouts:
        assert bucket_ids_for_record_keys(layout, ["id"], 97).tolist() == expected


def test_bucket_counts_may_come_as_an_arrow_column() -> None:
    keys = pa.array(["a", "b", "c"])
    counts = pa.array([1, 8, 97], pa.int32())
    assert bucket_ids_for_record_keys(keys, ["id"], counts).tolist() == [
        bucket_id(["a"], 1),
        bucket_id(["b"], 8),
        bucket_id(["c"], 97),
    ]


def test_an_empty_batch_gives_no_buckets() -> None:
    result = bucket_ids_for_record_keys(pa.array([], pa.string()), ["id"], np.array([], np.int64))
    assert result.dtype == np.int32
    assert result.shape == (0,)


def test_a_null_record_key_is_refused() -> None:
    with pytest.raises(CorruptTableError, match="null"):
        bucket_ids_for_record_keys(pa.array(["a", None]), ["id"], 8)


@pytest.mark.parametrize(
    "counts",
    [0, FORMAT_MAX_BUCKETS + 1, np.array([8, 0]), np.array([8]), np.array([8.0, 2.0]), pa.array([8, None])],
)
def test_invalid_bucket_counts_are_refused(counts: object) -> None:
    with pytest.raises(InvalidBucketCountError):
        bucket_ids_for_record_keys(pa.array(["a", "b"]), ["id"], counts)
