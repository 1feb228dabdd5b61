"""File groups and file slices, built from a partition's file names and the timeline (no I/O).

A base file is ``<fileId>_<writeToken>_<instant>.<ext>``; a log file is
``.<fileId>_<instant>.log.<version>_<writeToken>``. A file group is every file sharing a file id in
one partition; a file slice is one base instant's base file plus its log files. A group is live when a
completed replacecommit has not replaced it and it has a committed slice.

What a slice holds decides who reads it. A plain slice is a base file alone, holding every column of its
records. A bootstrapped one (RFC-12, METADATA_ONLY) has a skeleton base file of the bootstrap instant
``00000000000001`` holding only Hudi's meta columns: its data columns are in a source file outside the
table, row i beside row i, which the bootstrap index names. A MERGE_ON_READ slice with log files holds
updates and deletes to merge into its base file.

Which slice a log file belongs to: up to table version 6 its instant is its slice's base instant. From
version 8 on it is the instant of the deltacommit that wrote it, and the log belongs to the newest slice
whose base instant is at or before that deltacommit's completion time (a slice of its own when there is
none), as Hudi's file-system view assigns it. Logs of instants that did not complete are not data yet.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from hudi_bucket.core.timeline import Timeline

BASE_FILE_EXTENSIONS = ("parquet", "orc", "hfile")
# The instant of the skeleton base files a METADATA_ONLY bootstrap writes (Hudi's
# METADATA_BOOTSTRAP_INSTANT_TS); a FULL_RECORD bootstrap writes whole base files at ...02.
METADATA_BOOTSTRAP_INSTANT = "00000000000001"
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

    @property
    def is_bootstrap_skeleton(self) -> bool:
        """Whether this holds only the meta columns of records whose data is in a bootstrap source file."""
        return self.instant == METADATA_BOOTSTRAP_INSTANT

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
    instant: str  # the slice's base instant up to table version 6, the writing deltacommit's after
    version: int
    size: int = 0

    @property
    def path(self) -> str:
        return partition_file_path(self.partition, self.file_name)

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

    @property
    def is_plain(self) -> bool:
        """Whether its base file alone holds its records, every column: no log files to merge, no
        bootstrap source file beside it."""
        return self.base_file is not None and not self.log_files and not self.base_file.is_bootstrap_skeleton


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


def all_plain(groups: Iterable[FileGroup]) -> bool:
    """Whether every latest slice of these file groups is a plain base file, which a scan of base files
    reads whole (else Hudi's file group reader must read them)."""
    return all(s is None or s.is_plain for s in (g.latest_slice() for g in groups))


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
    logs: dict[tuple[str, str], list[LogFile]] = defaultdict(list)
    partitions: set[str] = set()
    for f in files:
        partitions.add(f.partition)
        base = BaseFile.parse(f.partition, f.name, f.size)
        if base is not None:
            if timeline.is_committed(base.instant):
                bases[(f.partition, base.file_id)][base.instant] = base
            continue
        log = LogFile.parse(f.partition, f.name, f.size)
        if log is not None and timeline.is_committed(log.instant):
            logs[(f.partition, log.file_id)].append(log)

    groups: dict[str, list[FileGroup]] = {p: [] for p in partitions}
    for key in sorted(set(bases) | set(logs)):
        partition, file_id = key
        if file_id in replaced.get(partition, frozenset()):
            continue
        group_bases = bases.get(key, {})
        slice_logs = _logs_by_slice(group_bases, logs.get(key, []), timeline)
        slices = tuple(
            FileSlice(
                partition, file_id, instant, group_bases.get(instant), tuple(slice_logs.get(instant, ()))
            )
            for instant in sorted(set(group_bases) | set(slice_logs))
            if as_of is None or instant <= as_of
        )
        if slices:
            groups[partition].append(FileGroup(partition, file_id, slices))
    return {p: tuple(g) for p, g in sorted(groups.items())}


def _logs_by_slice(
    bases: Mapping[str, BaseFile], logs: Iterable[LogFile], timeline: Timeline
) -> dict[str, list[LogFile]]:
    """A file group's committed log files by the base instant of their slice, each slice's in order."""
    by_slice: dict[str, list[LogFile]] = defaultdict(list)
    slice_instants = sorted(bases)
    for log in sorted(logs, key=lambda lf: (lf.instant, lf.version)):
        instant = timeline.get(log.instant)
        written = instant.completion_time if instant and instant.completion_time else log.instant
        earlier = [s for s in slice_instants if s <= written]
        if earlier:
            by_slice[earlier[-1]].append(log)
        else:  # no base file before it: a slice of logs only
            slice_instants = sorted([*slice_instants, log.instant])
            by_slice[log.instant].append(log)
    return by_slice
