"""File groups and file slices, built from a partition's file names and the timeline (no I/O).

A base file is ``<fileId>_<writeToken>_<instant>.<ext>``; a log file is
``.<fileId>_<baseInstant>.log.<version>_<writeToken>``. A file group is every file sharing a file id in
one partition; a file slice is one base instant's base file plus its log files. A group is live when a
completed replacecommit has not replaced it and it has a committed slice.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from hudi_bucket.core.timeline import Timeline

BASE_FILE_EXTENSIONS = ("parquet", "orc", "hfile")
PARTITION_METAFILE = ".hoodie_partition_metadata"

_BASE_FILE = re.compile(
    r"^(?P<id>[^_]+)_(?P<token>\d+-\d+-\d+)_(?P<ts>\d+)\.(?P<ext>" + "|".join(BASE_FILE_EXTENSIONS) + r")$"
)
_LOG_FILE = re.compile(
    r"^\.(?P<id>[^_]+)_(?P<ts>\d+)\.log\.(?P<version>\d+)(?:_(?P<token>\d+-\d+-\d+))?(?:\.cdc)?$"
)


def partition_file_path(partition: str, file_name: str) -> str:
    """A file's path relative to the table root ('' is the partition of a non-partitioned table)."""
    return f"{partition}/{file_name}" if partition else file_name


@dataclass(frozen=True)
class BaseFile:
    partition: str
    file_name: str
    file_id: str
    write_token: str
    instant: str
    size: int = 0

    @property
    def path(self) -> str:
        return partition_file_path(self.partition, self.file_name)

    @classmethod
    def parse(cls, partition: str, file_name: str, size: int = 0) -> BaseFile | None:
        match = _BASE_FILE.match(file_name)
        if not match:
            return None
        return cls(partition, file_name, match["id"], match["token"], match["ts"], size)


@dataclass(frozen=True)
class LogFile:
    partition: str
    file_name: str
    file_id: str
    base_instant: str
    version: int
    size: int = 0

    @classmethod
    def parse(cls, partition: str, file_name: str, size: int = 0) -> LogFile | None:
        match = _LOG_FILE.match(file_name)
        if not match:
            return None
        return cls(partition, file_name, match["id"], match["ts"], int(match["version"]), size)


@dataclass(frozen=True)
class FileSlice:
    partition: str
    file_id: str
    base_instant: str
    base_file: BaseFile | None = None
    log_files: tuple[LogFile, ...] = ()


@dataclass(frozen=True)
class FileGroup:
    partition: str
    file_id: str
    slices: tuple[FileSlice, ...] = field(default=())  # sorted by base instant

    def latest_slice(self, as_of: str | None = None) -> FileSlice | None:
        """The newest slice whose base instant is at or before ``as_of`` (all slices when None)."""
        eligible = [s for s in self.slices if as_of is None or s.base_instant <= as_of]
        return eligible[-1] if eligible else None

    @property
    def latest_base_file(self) -> BaseFile | None:
        latest = self.latest_slice()
        return latest.base_file if latest else None


@dataclass(frozen=True)
class PartitionFile:
    """A file found in a partition folder, as listed by storage."""

    partition: str
    name: str
    size: int


def live_file_groups(
    files: Iterable[PartitionFile],
    timeline: Timeline,
    replaced: Mapping[str, frozenset[str]],
) -> dict[str, tuple[FileGroup, ...]]:
    """The live file groups of each partition, as of the latest completed instant.

    Files written by instants that did not complete (pending or failed writers) are invisible; file
    groups listed in ``replaced`` (partition -> file ids, from completed replacecommits) are gone.
    Every partition in ``files`` appears in the result, possibly with no groups.
    """
    as_of = timeline.latest_completed.timestamp if timeline.latest_completed else None
    bases: dict[tuple[str, str], dict[str, BaseFile]] = defaultdict(dict)
    logs: dict[tuple[str, str], dict[str, list[LogFile]]] = defaultdict(lambda: defaultdict(list))
    partitions: set[str] = set()
    for f in files:
        partitions.add(f.partition)
        base = BaseFile.parse(f.partition, f.name, f.size)
        if base is not None:
            if timeline.is_committed(base.instant):
                bases[(f.partition, base.file_id)][base.instant] = base
            continue
        log = LogFile.parse(f.partition, f.name, f.size)
        if log is not None:
            logs[(f.partition, log.file_id)][log.base_instant].append(log)

    groups: dict[str, list[FileGroup]] = {p: [] for p in partitions}
    for key in sorted(set(bases) | set(logs)):
        partition, file_id = key
        if file_id in replaced.get(partition, frozenset()):
            continue
        slice_instants = sorted(set(bases.get(key, {})) | set(logs.get(key, {})))
        slices = tuple(
            FileSlice(
                partition,
                file_id,
                instant,
                bases.get(key, {}).get(instant),
                tuple(sorted(logs.get(key, {}).get(instant, []), key=lambda lf: lf.version)),
            )
            for instant in slice_instants
            if as_of is None or instant <= as_of
        )
        # A slice is real when its base file is committed, or (log-only MOR slices) its instant is.
        slices = tuple(s for s in slices if s.base_file is not None or timeline.is_committed(s.base_instant))
        if slices:
            groups[partition].append(FileGroup(partition, file_id, slices))
    return {p: tuple(g) for p, g in sorted(groups.items())}
