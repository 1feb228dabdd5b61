"""Java's ``String.hashCode`` and ``List.hashCode``, bit for bit.

Hudi places a record in a bucket from the Java hash of its index-key values, so any bucket we compute
in Python must agree with the JVM to the last bit. Two Java details matter: strings are hashed over
UTF-16 code units (a character outside the BMP counts as its two surrogates), and all arithmetic wraps
at 32 bits and is read back as a signed ``int``.
"""

from __future__ import annotations

from collections.abc import Iterable
from sys import byteorder

_UINT32 = 0xFFFFFFFF
_INT32_SIGN = 0x80000000
# Python's str may hold lone surrogates, as a Java String may: encode them as the code unit they are.
_UTF16 = "utf-16-le" if byteorder == "little" else "utf-16-be"


def _as_java_int(unsigned: int) -> int:
    """Read a 32-bit pattern as Java's signed ``int``."""
    return unsigned - (1 << 32) if unsigned & _INT32_SIGN else unsigned


def _utf16_code_units(value: str) -> memoryview:
    """The UTF-16 code units of ``value``, the sequence Java hashes (lone surrogates kept as they are)."""
    return memoryview(value.encode(_UTF16, "surrogatepass")).cast("H")


def _string_hash_unsigned(value: str) -> int:
    """``value.hashCode()``'s 32 bits: ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 units."""
    h = 0
    for unit in _utf16_code_units(value):
        h = (31 * h + unit) & _UINT32
    return h


def java_list_hash(values: Iterable[str | None]) -> int:
    """``List.hashCode()`` of a ``java.util.List<String>``: start at 1, fold ``31*h + hash(v)``, null is 0."""
    h = 1
    for value in values:
        h = (31 * h + (0 if value is None else _string_hash_unsigned(value))) & _UINT32
    return _as_java_int(h)
