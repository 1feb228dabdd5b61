"""Table files as paths Spark reads literally.

Spark expands glob characters in every path it reads, and a Hudi partition value may hold them: a
partition ``p=*`` would read every partition's files, ``p={a,b}`` none. Escaped for Hadoop's globber,
each path matches exactly its own file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hudi_bucket.storage.base import Storage

_SCHEME_AND_AUTHORITY = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:(//[^/]*)?")
_GLOB_CHARACTER = re.compile(r"([\\\[\]{}*?])")


def spark_root(storage: Storage) -> str:
    """The table root as a URI Spark reads; a storage root without a scheme is the local filesystem."""
    root = storage.uri.rstrip("/")
    return root if _SCHEME_AND_AUTHORITY.match(root) else f"file:{root}"


def path_part(uri: str) -> str:
    """The path of a URI written unencoded, as Hadoop prints one: ``s3a://b/x#1 y`` -> ``/x#1 y``
    (``urlparse`` would cut it at ``#`` or ``?``)."""
    return _SCHEME_AND_AUTHORITY.sub("", uri, count=1)


def literal(uri: str) -> str:
    """``uri`` with every glob character escaped, so Spark reads that one path."""
    return _GLOB_CHARACTER.sub(r"\\\1", uri)


def table_file_uris(storage: Storage, paths: Iterable[str]) -> list[str]:
    """Files given relative to the table root, as literal URIs for Spark's readers."""
    root = spark_root(storage)
    return [literal(f"{root}/{path}") for path in paths]
