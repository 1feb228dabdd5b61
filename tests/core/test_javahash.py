"""Java's String.hashCode and List.hashCode, checked against known values and against the JVM itself."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_bucket.core.javahash import java_list_hash

# Every kind of character that hashes differently: ASCII, the separators of record keys, Latin-1, CJK,
# characters outside the BMP (two UTF-16 units each), and lone surrogates (legal in a Java String).
CHARACTER_POOL = "abcXYZ019 ,:_-\x00\x7f\xe9\xff\u0100\u4e2d\ufffd\U0001f600\U00010000\U0010ffff\ud800\udfff"
any_java_char = st.characters(exclude_categories=())  # surrogates included


def random_text(rng: random.Random) -> str:
    return "".join(rng.choice(CHARACTER_POOL) for _ in range(rng.randrange(0, 40)))


def jvm_hash_codes(jvm: Any, items: list[object]) -> list[int]:
    """``hashCode()`` of each item (a str, or a list of str/None), computed by the JVM in one batch.

    The items cross as one JSON text (\\u escapes carry every UTF-16 unit, surrogates included), Jackson
    (on Spark's classpath) turns it into a java.util.List, and ``Object::hashCode`` is mapped over it
    in the JVM, so a batch costs a handful of py4j calls rather than one per item.
    """
    classes = jvm.java.lang.Class
    invoke = jvm.java.lang.invoke
    hash_code = invoke.MethodHandles.publicLookup().findVirtual(
        classes.forName("java.lang.Object"),
        "hashCode",
        invoke.MethodType.methodType(jvm.java.lang.Integer.TYPE),
    )
    to_int = invoke.MethodHandleProxies.asInterfaceInstance(
        classes.forName("java.util.function.ToIntFunction"), hash_code
    )
    java_items = jvm.com.fasterxml.jackson.databind.ObjectMapper().readValue(
        json.dumps(items), classes.forName("java.util.List")
    )
    printed = jvm.java.util.Arrays.toString(java_items.stream().mapToInt(to_int).toArray())
    return [int(n) for n in re.findall(r"-?\d+", printed)]


def java_string_hash(value: str) -> int:
    """``String.hashCode``, read off the hash of the one-element list that holds it (31 + its hash,
    wrapped): buckets hash lists of strings, so that is the function we have."""
    return (java_list_hash([value]) - 31 + 2**31) % 2**32 - 2**31


def test_known_string_hashes() -> None:
    assert java_string_hash("") == 0
    assert java_string_hash("a") == 97
    assert java_string_hash("TXN-102") == -166312976
    # A famous Java string whose hash is Integer.MIN_VALUE: the result is a signed 32-bit int.
    assert java_string_hash("polygenelubricants") == -(2**31)


def test_a_character_outside_the_bmp_hashes_as_its_two_surrogates() -> None:
    assert java_string_hash("\U0001f600") == 31 * 0xD83D + 0xDE00
    assert java_string_hash("\U0001f600") == java_string_hash("\ud83d\ude00")


def test_a_lone_surrogate_hashes_as_its_code_unit() -> None:
    assert java_string_hash("\ud800") == 0xD800


def test_list_hash_starts_at_one_and_counts_null_as_zero() -> None:
    assert java_list_hash([]) == 1
    assert java_list_hash([None]) == 31
    assert java_list_hash(["a", None]) == 31 * (31 + 97)
    assert java_list_hash([""]) == 31


def test_list_hash_wraps_to_a_signed_int() -> None:
    values = ["polygenelubricants"] * 3
    assert -(2**31) <= java_list_hash(values) < 2**31
    assert java_list_hash(iter(values)) == java_list_hash(values)


@pytest.mark.spark
def test_string_and_list_hashes_match_the_jvm_on_ten_thousand_random_keys(jvm: Any) -> None:
    rng = random.Random(20251121)
    strings = [random_text(rng) for _ in range(10_000)]
    lists = [
        [None if rng.random() < 0.1 else random_text(rng) for _ in range(rng.randrange(0, 5))]
        for _ in range(10_000)
    ]
    assert any(any(ord(c) > 0xFFFF for c in s) for s in strings)

    assert jvm_hash_codes(jvm, strings) == [java_string_hash(s) for s in strings]
    assert jvm_hash_codes(jvm, lists) == [java_list_hash(v) for v in lists]


@pytest.mark.spark
@settings(max_examples=50, deadline=None)
@given(lists=st.lists(st.lists(st.none() | st.text(any_java_char)), min_size=1, max_size=50))
def test_list_hashes_match_the_jvm_on_generated_lists(jvm: Any, lists: list[list[str | None]]) -> None:
    assert jvm_hash_codes(jvm, lists) == [java_list_hash(v) for v in lists]
