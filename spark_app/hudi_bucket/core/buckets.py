"""Bucket ids of Hudi's simple bucket index (RFC-29) and the file ids that carry them.

A record's bucket is ``(List.hashCode(indexKeyValues) & Integer.MAX_VALUE) % numBuckets``, computed in
Java; a bucket file group's id is a UUID whose first 8 characters are replaced by the zero-padded bucket
id, plus ``-0``. Readers take the bucket back as ``int(fileId[0:8])``, which is why ids stop at 8 digits.
"""

from __future__ import annotations

import re
import uuid as uuid_module
from collections.abc import Collection, Iterable

from hudi_bucket.core.javahash import java_list_hash
from hudi_bucket.core.recordkeys import KeyStyle, index_key_values
from hudi_bucket.errors import CorruptTableError, InvalidBucketCountError

BUCKET_ID_DIGITS = 8
MAX_BUCKET_ID = 10**BUCKET_ID_DIGITS - 1
"""The largest bucket id the 8-digit file-id prefix holds."""
FORMAT_MAX_BUCKETS = MAX_BUCKET_ID + 1
"""The most buckets a partition can have at all; ``rules.MAX_BUCKETS`` is the far lower sensible limit."""

_JAVA_INT_MAX = 0x7FFFFFFF
_BUCKET_FILE_ID = re.compile(rf"[0-9]{{{BUCKET_ID_DIGITS}}}-")
_FILE_GROUP_SUFFIX = "-0"


def check_num_buckets(num_buckets: int) -> None:
    """Refuse a bucket count Hudi cannot lay out (below 1, or ids past 8 digits)."""
    if not 1 <= num_buckets <= FORMAT_MAX_BUCKETS:
        raise InvalidBucketCountError(
            f"bucket count {num_buckets} is outside 1..{FORMAT_MAX_BUCKETS}",
            hint=f"bucket ids must fit {BUCKET_ID_DIGITS} digits: choose at most {FORMAT_MAX_BUCKETS} buckets",
        )


def bucket_id(values: Iterable[str | None], num_buckets: int) -> int:
    """The bucket Hudi assigns to a record whose index-key values are ``values`` (None is a Java null)."""
    check_num_buckets(num_buckets)
    return (java_list_hash(values) & _JAVA_INT_MAX) % num_buckets


def record_key_bucket_id(
    record_key: str, hash_fields: Collection[str], num_buckets: int, style: KeyStyle = KeyStyle.HUDI_1X
) -> int:
    """The bucket of the record whose ``_hoodie_record_key`` is ``record_key`` (see ``index_key_values``)."""
    return bucket_id(index_key_values(record_key, hash_fields, style), num_buckets)


def new_bucket_file_id(bucket: int, uuid: uuid_module.UUID | None = None) -> str:
    """A new file id for ``bucket``: ``uuid`` (random if None) with its first 8 characters replaced, plus ``-0``."""
    if not 0 <= bucket <= MAX_BUCKET_ID:
        raise InvalidBucketCountError(
            f"bucket id {bucket} does not fit the {BUCKET_ID_DIGITS}-digit file-id prefix",
            hint=f"bucket ids run from 0 to {MAX_BUCKET_ID}",
        )
    base = str(uuid_module.uuid4() if uuid is None else uuid)
    return f"{bucket:0{BUCKET_ID_DIGITS}d}{base[BUCKET_ID_DIGITS:]}{_FILE_GROUP_SUFFIX}"


def is_bucket_file_id(file_id: str) -> bool:
    """True when ``file_id`` starts with an 8-digit bucket id, as every bucket-index file group's does.

    A random UUID starts with 8 decimal digits about once in 43 draws, so True does not prove the
    table uses a bucket index; it only means a bucket-index reader would take this file for that bucket.
    """
    return _BUCKET_FILE_ID.match(file_id) is not None


def bucket_id_from_file_id(file_id: str) -> int:
    """The bucket a bucket-index reader assigns ``file_id`` to: its first 8 characters as a number."""
    if not is_bucket_file_id(file_id):
        raise CorruptTableError(
            f"file id {file_id!r} does not start with an {BUCKET_ID_DIGITS}-digit bucket id and a '-'",
            hint="this file group was not written by a bucket index; check the table's index type",
        )
    return int(file_id[:BUCKET_ID_DIGITS])
