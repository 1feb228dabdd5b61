"""The index-key values Hudi hashes, read back from a ``_hoodie_record_key`` string.

A complex key generator writes ``field1:value1,field2:value2`` (``__null__`` for null, ``__empty__`` for
""); a simple one writes the bare value. The bucket index re-splits that string and keeps the values of the
hash fields (``hoodie.bucket.index.hash.field``, by default the record-key fields), in record-key order.
Hudi 1.x and 0.x split differently, and a table keeps the layout of the release that wrote it, so both are
offered:

- ``HUDI_1X`` (``KeyGenUtils.extractRecordKeysByFields`` since Hudi 1.0): a key lacking ``,`` or lacking
  ``:`` is one value, taken as is. Otherwise a value runs up to the last ``,`` before the next ``:`` that
  comes after a ``,``, so values may hold ``,`` and ``:``. If no hash field is found the whole key is the
  one value.
- ``HUDI_0X`` (0.x ``BucketIdentifier`` over ``KeyGenUtils.extractRecordKeysByFields``): a key without
  ``:`` is one value; otherwise it is cut at every ``,`` and each piece at its first ``:``. A piece
  without ``:`` is kept as a value of its own. (The earliest bucket-index releases looked values up by
  hash-field name instead: hash-field order, placeholders kept, a value cut at its second ``:``. That
  layout is not offered.)

They agree on a key of two or more pairs whose values hold no ``,`` and which names a hash field. They
differ on ``id:1,name:a1,1`` (1.x ``["1", "a1,1"]``, 0.x ``["1", "a1", "1"]``), on a single complex pair
``id:1`` (1.x ``["id:1"]``, 0.x ``["1"]``) and on a key naming no hash field (1.x the whole key, 0.x no
value). Hudi 1.x never finishes splitting a key whose last field is not hashed and whose value holds
``:``, so no 1.x writer can have bucketed one: ``index_key_values`` refuses it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from enum import Enum

from hudi_bucket.errors import UnsupportedTableError

NULL_PLACEHOLDER = "__null__"
EMPTY_PLACEHOLDER = "__empty__"
PAIR_SEPARATOR = ","
FIELD_VALUE_SEPARATOR = ":"


class KeyStyle(Enum):
    """Which Hudi release's rule splits a record key into index-key values."""

    HUDI_1X = "1.x"
    HUDI_0X = "0.x"

    @property
    def pair_markers(self) -> tuple[str, ...]:
        """A key holding every one of these is split into pairs; any other key is its own single value."""
        if self is KeyStyle.HUDI_1X:
            return (PAIR_SEPARATOR, FIELD_VALUE_SEPARATOR)
        return (FIELD_VALUE_SEPARATOR,)


def takes_every_field(hash_fields: Collection[str], style: KeyStyle) -> bool:
    """Whether ``hash_fields`` selects every field of a key: when empty, and in Hudi 1.x when just ``""``."""
    return not hash_fields or (style is KeyStyle.HUDI_1X and list(hash_fields) == [""])


def is_single_value_key(record_key: str, style: KeyStyle) -> bool:
    """True when ``style`` takes ``record_key`` itself as the one index-key value, without splitting it."""
    return not all(marker in record_key for marker in style.pair_markers)


def index_key_values(
    record_key: str, hash_fields: Collection[str], style: KeyStyle = KeyStyle.HUDI_1X
) -> list[str | None]:
    """The values Hudi hashes to bucket ``record_key``, in record-key order (None is a Java null).

    ``hash_fields`` names the hash fields; empty means every field of the key.
    """
    if is_single_value_key(record_key, style):
        return [record_key]
    if style is KeyStyle.HUDI_1X:
        return _values_1x(record_key, hash_fields)
    return _values_0x(record_key, hash_fields)


def _decode_placeholder(value: str) -> str | None:
    if value == NULL_PLACEHOLDER:
        return None
    if value == EMPTY_PLACEHOLDER:
        return ""
    return value


def _pairs_1x(record_key: str) -> Iterator[tuple[str, str]]:
    """Hudi 1.x's ``(field, value)`` pairs: a value ends at the last ``,`` before a ``:`` that follows a ``,``."""
    start = 0
    while True:
        colon = record_key.index(FIELD_VALUE_SEPARATOR, start)
        comma = record_key.find(PAIR_SEPARATOR, colon + 1)
        next_colon = record_key.find(FIELD_VALUE_SEPARATOR, comma + 1) if comma >= 0 else -1
        if next_colon < 0:
            yield record_key[start:colon], record_key[colon + 1 :]
            return
        end = record_key.rindex(PAIR_SEPARATOR, 0, next_colon)
        yield record_key[start:colon], record_key[colon + 1 : end]
        start = end + 1


def _values_1x(record_key: str, hash_fields: Collection[str]) -> list[str | None]:
    every_field = takes_every_field(hash_fields, KeyStyle.HUDI_1X)
    wanted = frozenset(hash_fields)
    pairs = list(_pairs_1x(record_key))
    last_field, last_value = pairs[-1]
    if not every_field and last_field not in wanted and FIELD_VALUE_SEPARATOR in last_value:
        # Hudi's parser loops forever here, so no Hudi 1.x writer can have bucketed such a key.
        raise UnsupportedTableError(
            f"Hudi 1.x cannot split record key {record_key!r}: its last field {last_field!r} is not a "
            f"hash field and its value holds {FIELD_VALUE_SEPARATOR!r}",
            hint="check the table's hash fields, or use the Hudi 0.x key style if an 0.x release wrote it",
        )
    values = [_decode_placeholder(value) for field, value in pairs if every_field or field in wanted]
    return values or [record_key]


def _values_0x(record_key: str, hash_fields: Collection[str]) -> list[str | None]:
    every_field = takes_every_field(hash_fields, KeyStyle.HUDI_0X)
    wanted = frozenset(hash_fields)
    pieces = record_key.split(PAIR_SEPARATOR)
    while pieces and not pieces[-1]:  # Java's String.split drops trailing empty strings
        pieces.pop()
    values: list[str | None] = []
    for piece in pieces:
        field, separator, value = piece.partition(FIELD_VALUE_SEPARATOR)
        if not separator:
            values.append(piece)
        elif every_field or field in wanted:
            values.append(_decode_placeholder(value))
    return values
