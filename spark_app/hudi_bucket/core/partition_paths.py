"""Partition values as Hudi puts them in paths when a table URL-encodes them
(``hoodie.datasource.write.partitionpath.urlencode=true``): Hive's path escaping, which Hudi copies
(``PartitionPathEncodeUtils.escapePathName``). Each character below becomes ``%`` and its two upper-case
hex digits; every other character, non-ASCII letters and spaces included, stays as it is.

Without URL encoding a value goes into the path raw, and a colon then breaks Hadoop's ``Path`` (it reads
what comes before the first colon of a relative path as a URI scheme): Apache Hudi cannot read such a
partition, so values with a colon need a table that URL-encodes.
"""

from __future__ import annotations

# Control characters, then  " # % ' * / : = ? \ DEL { [ ] ^  (Hive's FileUtils.charToEscape).
ESCAPED = frozenset([chr(c) for c in range(1, 0x20)] + list("\"#%'*/:=?\\\x7f{[]^"))
NEEDS_URL_ENCODING = ":"  # what a raw (not URL-encoded) partition value must not hold


def escape_path_name(value: str) -> str:
    return "".join(f"%{ord(c):02X}" if c in ESCAPED else c for c in value)
