"""Bucket ids for a whole Arrow batch at once, equal row for row to ``buckets.record_key_bucket_id``.

Bucketing runs once per record inside Spark's ``mapInArrow``, so the per-record Python loop of the
scalar path would dominate a rescale. Here Java's string hash becomes array arithmetic: the strings are
transcoded to UTF-16 code units, each unit is weighted by the power of 31 for its distance from the end
of its string, and the weights are summed per string in uint32, whose wrap-around is Java's ``int``
overflow. A list hash is the same polynomial over the value hashes, plus ``31^len`` for the initial 1.

Record keys are read in three ways. A key the style takes whole is hashed as it is. A plain complex key,
whose every ``,``-separated piece holds exactly one ``:``, is split with Arrow kernels: both Hudi styles
read such a key the same simple way. Any other key is split in Python by ``recordkeys``, one at a time.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import reduce
from sys import byteorder
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from hudi_bucket.core.buckets import FORMAT_MAX_BUCKETS, check_num_buckets
from hudi_bucket.core.recordkeys import (
    EMPTY_PLACEHOLDER,
    FIELD_VALUE_SEPARATOR,
    NULL_PLACEHOLDER,
    PAIR_SEPARATOR,
    KeyStyle,
    index_key_values,
    takes_every_field,
)
from hudi_bucket.errors import CorruptTableError, InvalidBucketCountError

BucketCounts: TypeAlias = int | npt.ArrayLike | pa.Array | pa.ChunkedArray
"""One bucket count for every row, or one per row (partitions may differ)."""
Hashes: TypeAlias = npt.NDArray[np.uint32]  # Java int hashes, as their 32 bits
Units: TypeAlias = npt.NDArray[np.unsignedinteger[Any]]  # UTF-16 code units (bytes, when all ASCII)
Offsets: TypeAlias = npt.NDArray[np.int64]  # where each row's segment starts, then where the last ends
Rows: TypeAlias = npt.NDArray[np.intp]  # row numbers
Mask: TypeAlias = npt.NDArray[np.bool_]
BucketIds: TypeAlias = npt.NDArray[np.int32]

_JAVA_INT_MAX = np.uint32(0x7FFFFFFF)
_UTF16 = "utf-16-le" if byteorder == "little" else "utf-16-be"


def bucket_ids_for_record_keys(
    record_keys: pa.Array | pa.ChunkedArray,
    hash_fields: Collection[str],
    num_buckets: BucketCounts,
    style: KeyStyle = KeyStyle.HUDI_1X,
) -> BucketIds:
    """Bucket of each ``_hoodie_record_key`` in ``record_keys`` (see ``recordkeys.index_key_values``)."""
    keys = _string_array(record_keys)
    if keys.null_count:
        raise CorruptTableError(
            f"{keys.null_count} record key(s) are null; Hudi never writes a record without a key",
            hint="read _hoodie_record_key from the table's base files, not from another column",
        )
    counts = _bucket_counts(num_buckets, len(keys))
    list_hashes = np.empty(len(keys), dtype=np.uint32)
    taken_whole = _single_value_mask(keys, style)
    whole_rows, split_rows = np.flatnonzero(taken_whole), np.flatnonzero(~taken_whole)
    list_hashes[whole_rows] = _single_value_list_hashes(_rows(keys, whole_rows))
    if len(split_rows):
        list_hashes[split_rows] = _split_key_list_hashes(_rows(keys, split_rows), hash_fields, style)
    return _to_buckets(list_hashes, counts)


def _rows(strings: pa.Array, rows: Rows) -> pa.Array:
    """``strings.take(rows)``, without the copy when ``rows`` is every row."""
    return strings if len(rows) == len(strings) else strings.take(rows)


def _string_array(strings: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One contiguous string or large_string array, whatever chunking and string type came in."""
    if isinstance(strings, pa.ChunkedArray):
        strings = strings.combine_chunks()
    if not (pa.types.is_string(strings.type) or pa.types.is_large_string(strings.type)):
        strings = strings.cast(pa.large_string())
    return strings


def _single_value_mask(keys: pa.Array, style: KeyStyle) -> Mask:
    """Rows that ``style`` takes whole, mirroring ``recordkeys.is_single_value_key``."""
    if not len(keys):
        return np.zeros(0, dtype=bool)
    holds_every_marker = reduce(pc.and_, (pc.match_substring(keys, m) for m in style.pair_markers))
    holds: Mask = holds_every_marker.to_numpy(zero_copy_only=False)
    return ~holds


def _split_key_list_hashes(keys: pa.Array, hash_fields: Collection[str], style: KeyStyle) -> Hashes:
    """List hashes of keys that ``style`` splits into pairs.

    Plain keys are split with Arrow; the others (a value holding ``,`` or ``:``, an empty piece) in Python.
    """
    pieces = pc.split_pattern(keys, PAIR_SEPARATOR)
    piece_rows = pc.list_parent_indices(pieces).to_numpy()
    flat_pieces = pc.list_flatten(pieces)
    odd_piece = pc.count_substring(flat_pieces, FIELD_VALUE_SEPARATOR).to_numpy() != 1
    is_plain = np.bincount(piece_rows[odd_piece], minlength=len(keys)) == 0
    plain_piece = is_plain[piece_rows]

    pairs = pc.split_pattern(flat_pieces.filter(plain_piece), FIELD_VALUE_SEPARATOR, max_splits=1)
    fields, values = pc.list_element(pairs, 0), pc.list_element(pairs, 1)
    if takes_every_field(hash_fields, style):
        hashed = np.ones(len(values), dtype=bool)
    else:
        hashed = pc.is_in(fields, value_set=pa.array(list(hash_fields), fields.type)).to_numpy(
            zero_copy_only=False
        )
    hashed_values = values.filter(hashed)
    value_hashes = _string_hashes(hashed_values)
    # Both placeholders hash as 0, as a Java null and "" do.
    placeholders = pa.array([NULL_PLACEHOLDER, EMPTY_PLACEHOLDER], hashed_values.type)
    value_hashes[pc.is_in(hashed_values, value_set=placeholders).to_numpy(zero_copy_only=False)] = 0
    values_per_row = np.bincount(piece_rows[plain_piece][hashed], minlength=len(keys))
    offsets = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum(values_per_row, out=offsets[1:])
    list_hashes = _list_hashes(value_hashes, offsets)

    if style is KeyStyle.HUDI_1X:  # Hudi 1.x hashes a key that names no hash field whole
        unnamed_rows = np.flatnonzero(is_plain & (values_per_row == 0))
        list_hashes[unnamed_rows] = _single_value_list_hashes(keys.take(unnamed_rows))
    odd_rows = np.flatnonzero(~is_plain)
    if len(odd_rows):
        list_hashes[odd_rows] = _python_split_list_hashes(keys.take(odd_rows), hash_fields, style)
    return list_hashes


def _python_split_list_hashes(keys: pa.Array, hash_fields: Collection[str], style: KeyStyle) -> Hashes:
    """List hashes of keys that only ``recordkeys`` can split: split one by one, hash the values at once."""
    value_lists = [index_key_values(key, hash_fields, style) for key in keys.to_pylist()]
    offsets = np.zeros(len(value_lists) + 1, dtype=np.int64)
    np.cumsum([len(values) for values in value_lists], out=offsets[1:])
    flat_values = pa.array([v for values in value_lists for v in values], type=pa.large_string())
    return _list_hashes(_string_hashes(flat_values), offsets)


def _single_value_list_hashes(strings: pa.Array) -> Hashes:
    """``List.hashCode()`` of the one-element list of each row: ``31 + hash(value)``, as uint32 bits."""
    return np.uint32(31) + _string_hashes(strings)


def _string_hashes(strings: pa.Array) -> Hashes:
    """``String.hashCode()`` of every row as uint32 bits, 0 for a null (as ``List.hashCode`` counts it)."""
    units, offsets = _utf16_units(strings)
    hashes = _polynomial_hashes(units, offsets)
    if strings.null_count:
        hashes[~strings.is_valid().to_numpy(zero_copy_only=False)] = 0
    return hashes


def _list_hashes(value_hashes: Hashes, offsets: Offsets) -> Hashes:
    """``List.hashCode()`` of each list ``value_hashes[offsets[i]:offsets[i + 1]]``, as uint32 bits."""
    lengths = np.diff(offsets)
    initial_one = _powers_of_31(int(lengths.max(initial=0)) + 1)[lengths]
    hashes: Hashes = initial_one + _polynomial_hashes(value_hashes, offsets)
    return hashes


def _polynomial_hashes(terms: Units | Hashes, offsets: Offsets) -> Hashes:
    """Per segment ``terms[s:e]``, the sum of ``terms[j] * 31**(e - 1 - j)`` modulo 2**32 (0 if empty).

    This is Java's ``h = 31*h + x`` fold unrolled, so every term can be weighted at once.
    """
    lengths = np.diff(offsets)
    distance_to_end: Offsets = np.repeat(offsets[1:] - 1, lengths) - np.arange(len(terms), dtype=np.int64)
    weighted = terms * _powers_of_31(int(lengths.max(initial=0)))[distance_to_end]
    running = np.zeros(len(terms) + 1, dtype=np.uint32)
    np.cumsum(weighted, dtype=np.uint32, out=running[1:])
    sums: Hashes = running[offsets[1:]] - running[offsets[:-1]]
    return sums


def _powers_of_31(count: int) -> Hashes:
    """``31**0 .. 31**(count - 1)`` modulo 2**32."""
    factors = np.full(max(count, 1), 31, dtype=np.uint32)
    factors[0] = 1
    return np.cumprod(factors, dtype=np.uint32)


def _utf16_units(strings: pa.Array) -> tuple[Units, Offsets]:
    """The UTF-16 code units of all rows back to back, and each row's start and end in them.

    Arrow strings are valid UTF-8, so the codec transcodes the whole buffer in one call; the row bounds
    follow from the bytes: a lead byte starts one unit, a 4-byte lead (above the BMP) two.
    """
    if not len(strings):
        return np.zeros(0, dtype=np.uint32), np.zeros(1, dtype=np.int64)
    _, offsets_buffer, data_buffer = strings.buffers()
    offset_type = np.int64 if pa.types.is_large_string(strings.type) else np.int32
    byte_offsets = np.frombuffer(offsets_buffer, dtype=offset_type)[
        strings.offset : strings.offset + len(strings) + 1
    ].astype(np.int64)
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    data = data[byte_offsets[0] : byte_offsets[-1]]
    byte_offsets -= byte_offsets[0]
    if not (data & 0x80).any():  # all ASCII: one byte is one code unit
        return data, byte_offsets
    units = np.frombuffer(data.tobytes().decode("utf-8").encode(_UTF16), dtype=np.uint16)
    units_per_byte = ((data & 0xC0) != 0x80).astype(np.int64) + (data >= 0xF0)
    units_before_byte = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum(units_per_byte, out=units_before_byte[1:])
    return units, units_before_byte[byte_offsets]


def _bucket_counts(num_buckets: BucketCounts, rows: int) -> npt.NDArray[np.int64] | int:
    """``num_buckets`` checked like ``buckets.check_num_buckets``: an int, or an int64 array of ``rows``."""
    if isinstance(num_buckets, int | np.integer):
        check_num_buckets(int(num_buckets))
        return int(num_buckets)
    if isinstance(num_buckets, pa.ChunkedArray | pa.Array):
        if num_buckets.null_count:
            raise InvalidBucketCountError("a row has no bucket count (null)")
        num_buckets = num_buckets.to_numpy(zero_copy_only=False)
    counts = np.asarray(num_buckets)
    if counts.shape != (rows,) or not np.issubdtype(counts.dtype, np.integer):
        raise InvalidBucketCountError(
            f"expected {rows} integer bucket counts, got {counts.dtype} of shape {counts.shape}"
        )
    out_of_range = (counts < 1) | (counts > FORMAT_MAX_BUCKETS)
    if out_of_range.any():
        check_num_buckets(int(counts[np.argmax(out_of_range)]))
    return counts.astype(np.int64)


def _to_buckets(list_hashes: Hashes, counts: npt.NDArray[np.int64] | int) -> BucketIds:
    """``(hash & Integer.MAX_VALUE) % numBuckets`` for every row, as int32."""
    return ((list_hashes & _JAVA_INT_MAX).astype(np.int64) % counts).astype(np.int32)
