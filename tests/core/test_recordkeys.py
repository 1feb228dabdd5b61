"""Reading index-key values back from _hoodie_record_key, the way Hudi 1.x and Hudi 0.x do."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hudi_bucket.core.recordkeys import (
    EMPTY_PLACEHOLDER,
    NULL_PLACEHOLDER,
    KeyStyle,
    index_key_values,
    is_single_value_key,
)
from hudi_bucket.errors import HudiBucketError, UnsupportedTableError

HUDI_1X = KeyStyle.HUDI_1X
HUDI_0X = KeyStyle.HUDI_0X

field_names = st.text(st.characters(exclude_characters=",:"), min_size=1, max_size=8)
# Values as a key generator writes them: never a literal placeholder (that would read back as null / "").
values = st.text().filter(lambda v: v not in (NULL_PLACEHOLDER, EMPTY_PLACEHOLDER))
plain_values = st.text(st.characters(exclude_characters=",:")).filter(
    lambda v: v not in (NULL_PLACEHOLDER, EMPTY_PLACEHOLDER)
)


def complex_key(pairs: list[tuple[str, str | None]]) -> str:
    """The record key a complex key generator writes for these (field, value) pairs."""

    def encoded(value: str | None) -> str:
        if value is None:
            return NULL_PLACEHOLDER
        return value or EMPTY_PLACEHOLDER

    return ",".join(f"{field}:{encoded(value)}" for field, value in pairs)


@pytest.mark.parametrize("style", list(KeyStyle))
@pytest.mark.parametrize("key", ["TXN-102", "2024-10-22 14_11", "", "\U0001f600"])
def test_a_simple_key_is_its_own_single_value(style: KeyStyle, key: str) -> None:
    assert index_key_values(key, ["id"], style) == [key]


@pytest.mark.parametrize("style", list(KeyStyle))
def test_placeholders_are_decoded_in_pairs_only(style: KeyStyle) -> None:
    assert index_key_values("id:1,a:__null__,b:__empty__", [], style) == ["1", None, ""]
    assert index_key_values("__null__", ["id"], style) == ["__null__"]


@pytest.mark.parametrize("style", list(KeyStyle))
def test_values_come_in_record_key_order_not_hash_field_order(style: KeyStyle) -> None:
    assert index_key_values("a:1,b:2,c:3", ["c", "a"], style) == ["1", "3"]


@pytest.mark.parametrize(
    ("key", "hash_fields", "expected"),
    [
        # Facts from Hudi's own TestKeyGenUtils (hudi-client-common), Hudi 1.x.
        ("id1:1,id2:2,id3:3", ["id2"], ["2"]),
        ("id1:1,id2:2,2,id3:3", ["id2"], ["2,2"]),
        ("id1:1,1,1,id2:,2,2,,id3:3", ["id2"], [",2,2,"]),
        (
            "id1:1,,,id2:2024-10-22 14:11:53.023,id3:,,3,id4:::1:2::4::",
            ["id1", "id2", "id3", "id4"],
            ["1,,", "2024-10-22 14:11:53.023", ",,3", "::1:2::4::"],
        ),
        ("id:ab:cd,id2:ef", [], ["ab:cd", "ef"]),
        ("id:1,id2:2,2", [], ["1", "2,2"]),
        ("id:1,id:2", [], ["1", "2"]),
        # The check vector of the project's spec: a value holding a comma.
        ("id:1,name:a1,1", ["id", "name"], ["1", "a1,1"]),
        ("ts:2024-01-01 10:00:00,id:7", ["ts", "id"], ["2024-01-01 10:00:00", "7"]),
        ("a:1,", [], ["1,"]),
    ],
)
def test_hudi_1x_keeps_commas_and_colons_inside_values(
    key: str, hash_fields: list[str], expected: list[str | None]
) -> None:
    assert index_key_values(key, hash_fields, HUDI_1X) == expected


def test_hudi_1x_takes_a_key_without_comma_whole_even_with_a_colon() -> None:
    assert index_key_values("id:1", ["id"], HUDI_1X) == ["id:1"]
    assert index_key_values("2024-10-22 14:11:53.023", ["ts"], HUDI_1X) == ["2024-10-22 14:11:53.023"]


def test_hudi_1x_falls_back_to_the_whole_key_when_no_hash_field_is_in_it() -> None:
    assert index_key_values("a:1,b:2", ["zz"], HUDI_1X) == ["a:1,b:2"]


def test_hudi_1x_reads_a_lone_empty_hash_field_as_every_field() -> None:
    assert index_key_values("a:1,b:2", [""], HUDI_1X) == ["1", "2"]


def test_hudi_1x_refuses_a_key_its_own_parser_never_finishes() -> None:
    # The last field is not hashed and its value holds ':': Hudi 1.x loops forever on this key.
    with pytest.raises(UnsupportedTableError, match="cannot split record key"):
        index_key_values("id:1,ts:10:30", ["id"], HUDI_1X)
    assert index_key_values("id:1,ts:10:30", ["id", "ts"], HUDI_1X) == ["1", "10:30"]
    assert index_key_values("ts:10:30,id:1", ["id"], HUDI_1X) == ["1"]
    assert issubclass(UnsupportedTableError, HudiBucketError)


@pytest.mark.parametrize(
    ("key", "hash_fields", "expected"),
    [
        ("id:1,name:a1,1", ["id", "name"], ["1", "a1", "1"]),
        ("id:1", ["id"], ["1"]),
        ("a,b", ["id"], ["a,b"]),
        ("a:1:2,b:3", [], ["1:2", "3"]),
        ("a:1,,b:2", [], ["1", "", "2"]),
        ("a:1,b:2,,", [], ["1", "2"]),
        ("a:1,b:2", ["zz"], []),
        ("a:x,rest", ["zz"], ["rest"]),
    ],
)
def test_hudi_0x_cuts_at_every_comma_then_at_the_first_colon(
    key: str, hash_fields: list[str], expected: list[str | None]
) -> None:
    assert index_key_values(key, hash_fields, HUDI_0X) == expected


def test_the_default_style_is_hudi_1x() -> None:
    assert index_key_values("id:1,name:a1,1", ["id", "name"]) == ["1", "a1,1"]


@pytest.mark.parametrize(
    ("key", "single_in_1x", "single_in_0x"),
    [("abc", True, True), ("a,b", True, True), ("a:b", True, False), ("a:1,b:2", False, False)],
)
def test_which_keys_are_taken_whole(key: str, single_in_1x: bool, single_in_0x: bool) -> None:
    assert is_single_value_key(key, HUDI_1X) is single_in_1x
    assert is_single_value_key(key, HUDI_0X) is single_in_0x


@given(
    pairs=st.lists(
        st.tuples(field_names, st.none() | values.filter(lambda v: ":" not in v.partition(",")[2])),
        min_size=2,
        max_size=6,
    )
)
def test_hudi_1x_recovers_values_holding_colons_and_commas_not_followed_by_colons(
    pairs: list[tuple[str, str | None]],
) -> None:
    assert index_key_values(complex_key(pairs), [], HUDI_1X) == [value for _, value in pairs]


@given(
    pairs=st.lists(
        st.tuples(field_names, st.none() | plain_values),
        min_size=2,
        max_size=6,
    ),
    data=st.data(),
)
def test_both_styles_agree_on_plain_values(pairs: list[tuple[str, str | None]], data: st.DataObject) -> None:
    hash_fields = data.draw(st.sets(st.sampled_from([field for field, _ in pairs]), min_size=1))
    expected = [value for field, value in pairs if field in hash_fields]
    key = complex_key(pairs)
    assert index_key_values(key, hash_fields, HUDI_1X) == expected
    assert index_key_values(key, hash_fields, HUDI_0X) == expected
