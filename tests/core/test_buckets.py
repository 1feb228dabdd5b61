"""Bucket ids of records and of bucket file groups, as Hudi's simple bucket index computes them."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from hudi_bucket.core.buckets import (
    FORMAT_MAX_BUCKETS,
    MAX_BUCKET_ID,
    bucket_id,
    bucket_id_from_file_id,
    is_bucket_file_id,
    new_bucket_file_id,
    record_key_bucket_id,
)
from hudi_bucket.core.javahash import java_list_hash
from hudi_bucket.core.recordkeys import KeyStyle
from hudi_bucket.errors import CorruptTableError, InvalidBucketCountError

FIXED_UUID = uuid.UUID("8c2b4a6e-8c2b-4a6e-9d1f-0a1b2c3d4e5f")

# Index-key values and bucket counts that exercise the sign bit, nulls, surrogates and 8-digit counts.
JVM_CASES: list[tuple[list[str | None], int]] = [
    (["TXN-102"], 8),
    (["1", "a1,1"], 8),
    (["polygenelubricants"], 7),
    ([None], 5),
    ([], 3),
    (["", None, "\U0001f600"], 1000),
    (["order-42", "2024-01-01 10:00:00"], MAX_BUCKET_ID),
    (["order-42"], FORMAT_MAX_BUCKETS),
]


def jvm_bucket(jvm: Any, values: list[str | None], num_buckets: int) -> int:
    """Hudi's formula evaluated on a real java.util.ArrayList: (hashCode() & Integer.MAX_VALUE) % n."""
    java_list = jvm.java.util.ArrayList()
    for value in values:
        java_list.add(value)
    return (java_list.hashCode() & jvm.java.lang.Integer.MAX_VALUE) % num_buckets


def test_the_spec_check_vectors() -> None:
    assert bucket_id(["TXN-102"], 8) == 7
    assert bucket_id(["1", "a1,1"], 8) == 5


def test_record_keys_go_through_the_chosen_key_style() -> None:
    assert record_key_bucket_id("TXN-102", ["id"], 8) == 7
    assert record_key_bucket_id("id:1,name:a1,1", ["id", "name"], 8) == 5
    assert record_key_bucket_id("id:1,name:a1,1", ["id", "name"], 8, KeyStyle.HUDI_0X) == bucket_id(
        ["1", "a1", "1"], 8
    )


@pytest.mark.spark
@pytest.mark.parametrize(("values", "num_buckets"), JVM_CASES)
def test_bucket_ids_match_the_jvm(jvm: Any, values: list[str | None], num_buckets: int) -> None:
    assert bucket_id(values, num_buckets) == jvm_bucket(jvm, values, num_buckets)


def test_a_negative_hash_is_masked_to_31_bits_not_negated() -> None:
    negative = java_list_hash(["TXN-102"])
    assert negative < 0
    assert bucket_id(["TXN-102"], 8) == (negative + 2**31) % 8 != abs(negative) % 8


@pytest.mark.parametrize("num_buckets", [0, -1, FORMAT_MAX_BUCKETS + 1])
def test_bucket_counts_outside_the_8_digit_range_are_refused(num_buckets: int) -> None:
    with pytest.raises(InvalidBucketCountError, match="outside"):
        bucket_id(["a"], num_buckets)


def test_a_bucket_file_id_is_the_padded_bucket_over_a_uuid_plus_dash_zero() -> None:
    assert new_bucket_file_id(3, FIXED_UUID) == "00000003-8c2b-4a6e-9d1f-0a1b2c3d4e5f-0"


@pytest.mark.parametrize("bucket", [0, 7, 12_345, MAX_BUCKET_ID])
def test_file_ids_round_trip_every_8_digit_bucket(bucket: int) -> None:
    file_id = new_bucket_file_id(bucket)
    assert len(file_id) == 38
    assert "_" not in file_id
    assert is_bucket_file_id(file_id)
    assert bucket_id_from_file_id(file_id) == bucket


def test_new_file_ids_are_random_unless_a_uuid_is_given() -> None:
    assert new_bucket_file_id(1) != new_bucket_file_id(1)


@pytest.mark.parametrize("bucket", [-1, FORMAT_MAX_BUCKETS])
def test_a_bucket_id_past_8_digits_gets_no_file_id(bucket: int) -> None:
    with pytest.raises(InvalidBucketCountError, match="8-digit"):
        new_bucket_file_id(bucket)


@pytest.mark.parametrize(
    "file_id",
    [
        "8c2b4a6e-8c2b-4a6e-9d1f-0a1b2c3d4e5f-0",
        "0000003-8c2b-4a6e-9d1f-0a1b2c3d4e5f-0",
        "00000003",
        "",
        "+0000003-x",
    ],
)
def test_file_ids_without_an_8_digit_prefix_are_not_bucket_file_ids(file_id: str) -> None:
    assert not is_bucket_file_id(file_id)
    with pytest.raises(CorruptTableError, match="8-digit bucket id"):
        bucket_id_from_file_id(file_id)


def test_a_random_uuid_can_look_like_a_bucket_file_id() -> None:
    # Readers only look at the first 8 characters, so a plain UUID of digits passes too.
    assert bucket_id_from_file_id("12345678-8c2b-4a6e-9d1f-0a1b2c3d4e5f-0") == 12_345_678
