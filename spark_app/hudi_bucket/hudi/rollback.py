"""Undo one of our own rescales or writes: pending (a crash, a refused completion) or completed.

Order matters for readers and writers at every step:
1. the hashing_config version goes first, so no writer routes records by the undone bucket counts;
2. a completed instant loses its completed file first, which makes it pending again: its new files turn
   invisible and the file groups it replaced come back, before any file is deleted; then what the
   caller undoes while the instant is pending (the metadata table's delta commit of the same time);
3. then its data files, the partitions it created (their ``.hoodie_partition_metadata`` names the
   instant and nothing else is left in them; partitions that existed before name an older one) and our
   staging folder;
4. last, the pending instant files (inflight, then requested) and the instant's heartbeat.
A crash anywhere leaves a state the next ``rollback`` or ``apply`` finishes from.

``discard`` is the same cleanup for an instant of ours that another writer already took off the timeline
(Hudi's eager failed-writes cleaning) while our job still wrote files for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hudi_bucket.core.filegroups import PARTITION_METAFILE, BaseFile, partition_file_path
from hudi_bucket.core.heartbeat import heartbeat_path
from hudi_bucket.core.properties import parse_properties
from hudi_bucket.core.report_json import JsonObject
from hudi_bucket.core.timeline import WRITE_ACTIONS, Instant, State
from hudi_bucket.errors import TableBusyError
from hudi_bucket.hudi import config_store
from hudi_bucket.hudi.fs_view import list_partitions, partition_files
from hudi_bucket.hudi.table import HudiTable, timeline_store
from hudi_bucket.storage.base import Storage, join

STAGING_PREFIX = ".hoodie/.temp/hudi-bucket-"


@dataclass(frozen=True)
class RollbackResult:
    instant: str
    was_completed: bool
    config_removed: bool
    files_removed: int

    def to_dict(self) -> JsonObject:
        return {
            "instant": self.instant,
            "wasCompleted": self.was_completed,
            "configRemoved": self.config_removed,
            "filesRemoved": self.files_removed,
        }


def rollback(
    storage: Storage, table: HudiTable, timestamp: str, when_pending: Callable[[], object] | None = None
) -> RollbackResult:
    """``when_pending`` runs once the instant is pending and before any file goes: what else must be
    undone while readers ignore the instant (the metadata table's delta commit of the same time)."""
    store = timeline_store(storage, table)
    instant = table.timeline.get(timestamp)
    if instant is None:
        raise TableBusyError(
            f"instant {timestamp} is not on the active timeline", hint="nothing to roll back"
        )
    if not store.is_ours(instant):
        raise TableBusyError(
            f"instant {timestamp} ({instant.action.value}, {instant.state.name.lower()}) was not written by "
            "hudi-bucket-operator",
            hint="roll it back with Hudi's own tools",
        )
    if instant.is_completed:
        _refuse_if_depended_on(storage, table, instant)

    config_removed = _remove_config(storage, table, timestamp)
    partitions = _touched_partitions(storage, table, instant)
    if instant.is_completed:
        storage.delete(join(store.folder, instant.file_name(store.layout)))
    if when_pending is not None:
        when_pending()
    files_removed = remove_instant_files(storage, timestamp, partitions)
    for state in (State.INFLIGHT, State.REQUESTED):
        storage.delete(join(store.folder, Instant(timestamp, instant.action, state).file_name(store.layout)))
    storage.delete(heartbeat_path(timestamp))
    return RollbackResult(timestamp, instant.is_completed, config_removed, files_removed)


def discard(storage: Storage, table: HudiTable, timestamp: str, partitions: tuple[str, ...]) -> None:
    """Remove what our job wrote for ``timestamp`` in ``partitions`` once the instant is off the
    timeline: nothing reads those files, but they would stay forever."""
    if table.timeline.get(timestamp) is not None:
        raise TableBusyError(f"instant {timestamp} is on the timeline", hint="roll it back instead")
    _remove_config(storage, table, timestamp)
    remove_instant_files(storage, timestamp, partitions)
    storage.delete(heartbeat_path(timestamp))


def remove_instant_files(storage: Storage, timestamp: str, partitions: tuple[str, ...]) -> int:
    """The instant's base files, the partitions it created and our staging folder; returns the count of
    files. (Also what a write that failed part-way left, before the write is redone.)"""
    files_removed = 0
    for partition in partitions:
        for f in partition_files(storage, partition):
            base = BaseFile.parse(partition, f.name)
            if base is not None and base.instant == timestamp:
                storage.delete(partition_file_path(partition, f.name))
                files_removed += 1
        _remove_if_created(storage, partition, timestamp)
    storage.delete(STAGING_PREFIX + timestamp, recursive=True)
    return files_removed


def _remove_if_created(storage: Storage, partition: str, timestamp: str) -> None:
    """Remove the partition metafile the instant wrote, once no other file is left beside it, then every
    folder left empty up to (not including) the table root."""
    metafile = join(partition, PARTITION_METAFILE)
    entries = storage.list(partition)
    if not storage.exists(metafile) or any(not e.is_dir and e.name != PARTITION_METAFILE for e in entries):
        return
    if parse_properties(storage.read(metafile)).get("commitTime") != timestamp:
        return
    storage.delete(metafile)
    folder = partition
    while folder and not storage.list(folder):
        storage.delete(folder, recursive=True)
        folder = folder.rpartition("/")[0]


def _refuse_if_depended_on(storage: Storage, table: HudiTable, instant: Instant) -> None:
    newer = [
        i for i in table.timeline.instants if i.timestamp > instant.timestamp and i.action in WRITE_ACTIONS
    ]
    if newer:
        names = ", ".join(f"{i.timestamp} ({i.action.value})" for i in newer[:5])
        raise TableBusyError(
            f"cannot roll back {instant.timestamp}: newer writes depend on its layout: {names}",
            hint="edit the rules back instead; applying them rescales the table forward",
        )
    later_configs = [t for t in config_store.list_instants(storage) if t > instant.timestamp]
    if later_configs:
        raise TableBusyError(
            f"cannot roll back {instant.timestamp}: newer hashing_config versions exist: {', '.join(later_configs)}",
            hint="roll back the newer rescales first",
        )


def _remove_config(storage: Storage, table: HudiTable, timestamp: str) -> bool:
    """Delete the version this instant wrote; when it was the only one (an upgrade of a plain bucket
    table), the whole configs folder goes, since Hudi writers fail on an existing but empty one."""
    versions = config_store.list_instants(storage)
    if timestamp not in versions:
        return False
    if versions == [timestamp]:
        storage.delete(config_store.META_FOLDER, recursive=True)
    else:
        config_store.delete_config(storage, timestamp, table.timeline.pending_replace_timestamps())
    return True


def _touched_partitions(storage: Storage, table: HudiTable, instant: Instant) -> tuple[str, ...]:
    """Partitions the instant wrote, from its own metadata; every partition when it never got that far."""
    store = timeline_store(storage, table)
    for state in (State.COMPLETED, State.INFLIGHT):
        if instant.state >= state:
            recorded = Instant(instant.timestamp, instant.action, state, instant.completion_time)
            partitions = store.read_commit_metadata(recorded).partitions
            if partitions:
                return tuple(sorted(partitions))
    return list_partitions(storage)
