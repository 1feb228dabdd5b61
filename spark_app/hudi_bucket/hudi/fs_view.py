"""A table's file-system view (hudi-rs's ``fs_view``): its partitions, their live file groups and the rows
of each base file, as listed from storage and the timeline; and each partition's bucket count under
the config in force."""

from __future__ import annotations

from hudi_bucket.core.filegroups import PARTITION_METAFILE, FileGroup, PartitionFile, live_file_groups
from hudi_bucket.core.hashing_config import HashingConfig
from hudi_bucket.core.rules import Matcher
from hudi_bucket.core.timeline import REPLACE_ACTIONS, WRITE_ACTIONS
from hudi_bucket.hudi import config_store
from hudi_bucket.hudi.table import HudiTable, timeline_store
from hudi_bucket.storage.base import FileInfo, Storage, list_many


def list_partitions(storage: Storage) -> tuple[str, ...]:
    """Every partition path, found by its partition metafile as Hudi does ('' for a non-partitioned
    table). Hidden folders (``.hoodie``, ``.temp``) are never partitions."""
    return tuple(sorted(_partition_listings(storage)))


def _partition_listings(storage: Storage) -> dict[str, list[FileInfo]]:
    """Every partition with its listing. A level of folders at a time, each level listed in parallel on
    an object store; the listing that finds a partition's metafile is also its list of files, so no
    partition is listed twice."""
    found: dict[str, list[FileInfo]] = {}
    level = [""]
    while level:
        below = []
        for folder, entries in zip(level, list_many(storage, level), strict=True):
            if any(not e.is_dir and e.name.startswith(PARTITION_METAFILE) for e in entries):
                found[folder] = entries
            else:
                below += [e.path for e in entries if e.is_dir and not e.name.startswith(".")]
        level = below
    return found


def partition_files(storage: Storage, partition: str) -> list[PartitionFile]:
    return _files_of(partition, storage.list(partition))


def _files_of(partition: str, entries: list[FileInfo]) -> list[PartitionFile]:
    return [PartitionFile(partition, e.name, e.size) for e in entries if not e.is_dir]


def replaced_file_ids(storage: Storage, table: HudiTable) -> dict[str, frozenset[str]]:
    """File groups replaced by completed replacecommits (insert-overwrite and clustering)."""
    store = timeline_store(storage, table)
    replaced: dict[str, set[str]] = {}
    for instant in table.timeline.completed():
        if instant.action in REPLACE_ACTIONS:
            for partition, ids in store.read_commit_metadata(instant).replaced_file_ids.items():
                replaced.setdefault(partition, set()).update(ids)
    return {p: frozenset(ids) for p, ids in replaced.items()}


def load_file_groups(
    storage: Storage, table: HudiTable, partitions: tuple[str, ...] | None = None
) -> dict[str, tuple[FileGroup, ...]]:
    """The live file groups of each partition (all partitions when None), as of the latest completed
    instant, listed from storage."""
    if partitions is None:
        listings = _partition_listings(storage)
        chosen = tuple(sorted(listings))
    else:
        chosen = partitions
        listings = dict(zip(chosen, list_many(storage, chosen), strict=True))
    files = [f for p in chosen for f in _files_of(p, listings[p])]
    groups = live_file_groups(files, table.timeline, replaced_file_ids(storage, table))
    return {p: groups.get(p, ()) for p in chosen}


def rows_by_base_file(storage: Storage, table: HudiTable) -> dict[str, int]:
    """Rows of each base file, from the write stats of the completed commits on the active timeline."""
    store = timeline_store(storage, table)
    rows: dict[str, int] = {}
    for instant in table.timeline.completed():
        if instant.action in WRITE_ACTIONS:
            for stats in store.read_commit_metadata(instant).write_stats.values():
                for stat in stats:
                    if stat.path:
                        rows[stat.path] = stat.num_writes
    return rows


def bucket_counts(
    storage: Storage, table: HudiTable, matcher: Matcher
) -> tuple[HashingConfig | None, dict[str, int]]:
    """The config in force (None: none yet, and no counts) and each partition's bucket count under it."""
    in_force = config_store.load_in_force(storage, table.timeline.pending_replace_timestamps())
    if in_force is None:
        return None, {}
    rules = in_force.to_rules()
    return in_force, {p: rules.buckets_for(p, matcher) for p in list_partitions(storage)}
