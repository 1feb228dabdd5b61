"""Commit metadata: what a commit or replacecommit instant records (no I/O).

The same field names serve both encodings: JSON (Jackson, layout 1) and Avro records (layout 2, and
every requested replacecommit). ``prevCommit`` is the string ``"null"`` for a new file group, as Hudi
writes it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict


class WriteStatRecord(TypedDict):
    """A write stat as we write it, keyed as Hudi's Avro schema and Jackson name its fields, in Hudi's
    order. The counters after fileSizeInBytes are 0 on every write stat Hudi writes (readers expect
    numbers, not nulls), numUpdateWrites apart."""

    fileId: str
    path: str
    prevCommit: str
    numWrites: int
    numInserts: int
    totalWriteBytes: int
    partitionPath: str
    fileSizeInBytes: int
    numDeletes: int
    numUpdateWrites: int
    totalWriteErrors: int
    totalLogRecords: int
    totalLogFilesCompacted: int
    totalLogSizeCompacted: int
    totalUpdatedRecordsCompacted: int
    totalLogBlocks: int
    totalCorruptLogBlock: int
    totalRollbackBlocks: int


class CommitRecord(TypedDict):
    """A commit's (or replacecommit's) metadata as we write it, keyed as Hudi names its fields."""

    partitionToWriteStats: dict[str, list[WriteStatRecord]]
    compacted: bool
    extraMetadata: dict[str, str]
    operationType: str
    partitionToReplaceFileIds: NotRequired[dict[str, list[str]]]  # a replacecommit's


INSERT_OVERWRITE = "INSERT_OVERWRITE"
INSERT = "INSERT"
UPSERT = "UPSERT"


@dataclass(frozen=True)
class WriteStat:
    partition_path: str
    file_id: str
    path: str  # relative to the table root
    num_writes: int
    num_inserts: int
    total_write_bytes: int
    file_size_in_bytes: int
    prev_commit: str = "null"
    num_update_writes: int = 0

    def to_record(self) -> WriteStatRecord:
        return {
            "fileId": self.file_id,
            "path": self.path,
            "prevCommit": self.prev_commit,
            "numWrites": self.num_writes,
            "numInserts": self.num_inserts,
            "totalWriteBytes": self.total_write_bytes,
            "partitionPath": self.partition_path,
            "fileSizeInBytes": self.file_size_in_bytes,
            "numDeletes": 0,
            "numUpdateWrites": self.num_update_writes,
            "totalWriteErrors": 0,
            "totalLogRecords": 0,
            "totalLogFilesCompacted": 0,
            "totalLogSizeCompacted": 0,
            "totalUpdatedRecordsCompacted": 0,
            "totalLogBlocks": 0,
            "totalCorruptLogBlock": 0,
            "totalRollbackBlocks": 0,
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> WriteStat:
        """A write stat as Hudi wrote it, decoded from JSON or Avro: the edge where Hudi's records are
        read, as Hudi's own readers do (a missing or null field is its default), so untyped."""
        return cls(
            partition_path=record.get("partitionPath") or "",
            file_id=record.get("fileId") or "",
            path=record.get("path") or "",
            num_writes=record.get("numWrites") or 0,
            num_inserts=record.get("numInserts") or 0,
            total_write_bytes=record.get("totalWriteBytes") or 0,
            file_size_in_bytes=record.get("fileSizeInBytes") or 0,
            prev_commit=record.get("prevCommit") or "null",
            num_update_writes=record.get("numUpdateWrites") or 0,
        )


@dataclass(frozen=True)
class CommitMetadata:
    """A commit's (or replacecommit's) metadata; replaced file ids are empty for a plain commit."""

    operation_type: str
    write_stats: Mapping[str, tuple[WriteStat, ...]] = field(default_factory=dict)
    replaced_file_ids: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    extra_metadata: Mapping[str, str] = field(default_factory=dict)

    def to_record(self, *, replace: bool) -> CommitRecord:
        record: CommitRecord = {
            "partitionToWriteStats": {
                p: [s.to_record() for s in stats] for p, stats in self.write_stats.items()
            },
            "compacted": False,
            "extraMetadata": dict(self.extra_metadata),
            "operationType": self.operation_type,
        }
        if replace:
            record["partitionToReplaceFileIds"] = {p: list(ids) for p, ids in self.replaced_file_ids.items()}
        return record

    def to_json(self, *, replace: bool) -> bytes:
        """Layout 1's encoding: Jackson's pretty printer style (``"key" : value``, two-space indent)."""
        return jackson_pretty(self.to_record(replace=replace)).encode()

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> CommitMetadata:
        """A commit's metadata as Hudi wrote it, decoded from JSON or Avro (untyped, as ``WriteStat``'s)."""
        stats = record.get("partitionToWriteStats") or {}
        replaced = record.get("partitionToReplaceFileIds") or {}
        return cls(
            operation_type=record.get("operationType") or "UNKNOWN",
            write_stats={p: tuple(WriteStat.from_record(s) for s in v or ()) for p, v in stats.items()},
            replaced_file_ids={p: tuple(ids or ()) for p, ids in replaced.items()},
            extra_metadata=dict(record.get("extraMetadata") or {}),
        )

    @property
    def partitions(self) -> frozenset[str]:
        return frozenset(self.write_stats) | frozenset(self.replaced_file_ids)


def jackson_pretty(value: object) -> str:
    """JSON laid out as Jackson's default pretty printer does (``"k" : v``, ``[ a, b ]``)."""
    return _render(value, 0)


def _render(value: object, depth: int) -> str:
    pad, inner = "  " * depth, "  " * (depth + 1)
    if isinstance(value, Mapping):
        if not value:
            return "{ }"
        items = ",\n".join(
            f"{inner}{json.dumps(k, ensure_ascii=False)} : {_render(v, depth + 1)}" for k, v in value.items()
        )
        return "{\n" + items + "\n" + pad + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[ ]"
        return "[ " + ", ".join(_render(v, depth) for v in value) + " ]"
    return json.dumps(value, ensure_ascii=False)
