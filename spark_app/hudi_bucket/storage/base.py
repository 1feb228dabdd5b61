"""The storage contract every backend meets.

A Storage is rooted at one base URI (a table's root); every path it takes is relative to that root and
uses ``/`` as separator. Hudi's own files are small, so reads and writes move whole byte strings.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class FileInfo:
    path: str  # relative to the storage root
    size: int
    is_dir: bool
    modified_ms: int = field(
        default=0, compare=False
    )  # last modification, ms since the epoch (Hudi's heartbeats)

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


class Storage(Protocol):
    @property
    def uri(self) -> str:
        """The absolute base URI this storage is rooted at."""
        ...

    def exists(self, path: str) -> bool: ...

    def list(self, path: str) -> list[FileInfo]:
        """Direct children of a folder, sorted by path; empty when the folder does not exist."""
        ...

    def read(self, path: str) -> bytes:
        """The whole file; StorageError when it does not exist."""
        ...

    def write(self, path: str, data: bytes, *, overwrite: bool = False) -> None:
        """Write a whole file, creating parent folders.

        With ``overwrite=False`` the write fails with StorageError when the file exists; backends say
        how atomic that check is. Readers never see a partial file where the backend allows it.
        """
        ...

    def delete(self, path: str, *, recursive: bool = False) -> None:
        """Delete a file (or a folder with ``recursive``); deleting what is absent is not an error."""
        ...

    def rename(self, src: str, dst: str) -> None:
        """Move a file or folder; fails when ``dst`` exists."""
        ...

    @property
    def is_object_store(self) -> bool:
        """Whether this is an object store: ``rename`` copies the bytes then deletes, and each listing is
        a request of its own (tens of milliseconds on S3), so callers moving or listing many paths do it
        in parallel there."""
        ...


# Never part of a table: macOS archive noise (real-world tables and the fixture zips carry it) and the
# ``.<name>.crc`` checksum side files Hadoop's LocalFileSystem writes beside each file it creates.
_NOISE_NAMES = frozenset({".DS_Store", "__MACOSX"})


def is_noise(name: str) -> bool:
    """Whether a listed name is storage noise that every backend leaves out of listings."""
    return name in _NOISE_NAMES or name.startswith("._") or (name.startswith(".") and name.endswith(".crc"))


# Concurrent requests to an object store: each mostly waits on the server, and S3 serves thousands of
# requests a second per prefix.
PARALLEL_REQUESTS = 16


def list_many(storage: Storage, folders: Sequence[str]) -> list[list[FileInfo]]:
    """``storage.list`` of each folder, in order; in parallel on an object store."""
    if not storage.is_object_store or len(folders) < 2:
        return [storage.list(folder) for folder in folders]
    with ThreadPoolExecutor(min(PARALLEL_REQUESTS, len(folders)), thread_name_prefix="hbo-list") as pool:
        return list(pool.map(storage.list, folders))


def walk(storage: Storage, path: str = "") -> Iterator[FileInfo]:
    """Every file below ``path``, depth first, folders in sorted order."""
    for info in storage.list(path):
        if info.is_dir:
            yield from walk(storage, info.path)
        else:
            yield info


def join(*parts: str) -> str:
    """Join relative storage paths, skipping empty parts."""
    return "/".join(p.strip("/") for p in parts if p and p.strip("/"))
