"""The versioned hashing_config files of a table with a partition-level bucket index.

Hudi 1.1 treats a table as partition-level as soon as the configs folder exists, and its writers then
fail unless that folder holds a loadable version; every entry there is read as ``<instant>.<anything>``.
So this store refuses stray entries, never overwrites a version (versions are immutable: each belongs to
one replacecommit), and refuses a delete that would leave no version in force.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from hudi_bucket.core.hashing_config import (
    INITIAL_INSTANT,
    HashingConfig,
    instants_to_archive,
    select_in_force,
)
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.errors import InvalidHashingConfigError, StorageError
from hudi_bucket.storage.base import Storage

META_FOLDER = ".hoodie/.bucket_index/partition_bucket_index_meta"
CONFIGS_FOLDER = f"{META_FOLDER}/configs"
ARCHIVE_FOLDER = f"{META_FOLDER}/archive"
SUFFIX = ".hashing_config"

_INSTANT = re.compile(r"\d+", re.ASCII)


def config_path(instant: str, *, archived: bool = False) -> str:
    if not _INSTANT.fullmatch(instant):
        raise InvalidHashingConfigError(f"{instant!r} is not an instant: no config version is named so")
    return f"{ARCHIVE_FOLDER if archived else CONFIGS_FOLDER}/{instant}{SUFFIX}"


def is_partition_level(storage: Storage) -> bool:
    """Whether Hudi's writers treat the table as partition-level (they only check the folder exists)."""
    return storage.exists(CONFIGS_FOLDER)


def list_instants(storage: Storage, *, archived: bool = False) -> list[str]:
    """Instants of the stored versions, sorted; InvalidHashingConfigError on any other entry."""
    instants = []
    for info in storage.list(ARCHIVE_FOLDER if archived else CONFIGS_FOLDER):
        instant = info.name.removesuffix(SUFFIX)
        if info.is_dir or instant == info.name or not _INSTANT.fullmatch(instant):
            raise InvalidHashingConfigError(
                f"{storage.uri}/{info.path} is not an <instant>{SUFFIX} file",
                hint="move it out of that folder: Hudi reads every entry there as a config version",
            )
        instants.append(instant)
    return sorted(instants)


def read_config(storage: Storage, instant: str, *, archived: bool = False) -> HashingConfig:
    path = config_path(instant, archived=archived)
    source = f"{storage.uri}/{path}"
    config = HashingConfig.from_json(storage.read(path), source)
    if config.instant != instant:
        raise InvalidHashingConfigError(f"{source}: holds instant {config.instant!r}, not its own")
    return config


def write_config(storage: Storage, config: HashingConfig) -> None:
    """Save a new version, create-only: a version that exists is never replaced.

    The file appears whole or not at all (the Storage writes atomically where it can). InvalidRuleError
    when Hudi's rule engine could not read the expressions.
    """
    path = config_path(config.instant)
    config.to_rules()
    if storage.exists(path):
        raise StorageError(
            f"{storage.uri}/{path} already exists: config versions are never overwritten",
            hint="each version belongs to one replacecommit; roll that instant back to replace it",
        )
    storage.write(path, config.to_json())


def create_initial_config(storage: Storage, rules: BucketRules) -> HashingConfig:
    """Make ``rules`` the table's first version, at ``INITIAL_INSTANT`` as Hudi does at table creation."""
    existing = list_instants(storage)
    if existing:
        raise StorageError(
            f"{storage.uri}/{CONFIGS_FOLDER} already holds versions {existing}",
            hint="change the rules of a partition-level table with a new version, not an initial one",
        )
    config = HashingConfig.from_rules(rules, INITIAL_INSTANT)
    write_config(storage, config)
    return config


def load_in_force(storage: Storage, pending_replacecommits: Collection[str]) -> HashingConfig | None:
    """The version Hudi's writers use now; None for a table without a partition-level bucket index."""
    if not is_partition_level(storage):
        return None
    instant = select_in_force(list_instants(storage), pending_replacecommits)
    if instant is None:
        raise InvalidHashingConfigError(
            f"{storage.uri}/{CONFIGS_FOLDER} holds no committed version: Hudi writers fail on this table",
            hint="complete or roll back the pending replacecommit, or save a version",
        )
    return read_config(storage, instant)


def archive_old_versions(storage: Storage, first_active_instant: str | None) -> list[str]:
    """Move the versions Hudi would archive (see ``instants_to_archive``) and return their instants."""
    instants = instants_to_archive(list_instants(storage), first_active_instant)
    for instant in instants:
        storage.rename(config_path(instant), config_path(instant, archived=True))
    return instants


def delete_config(storage: Storage, instant: str, pending_replacecommits: Collection[str]) -> bool:
    """Delete the version saved by ``instant`` before that instant is rolled back, as Hudi's rollback does.

    False when there is no such version. Refused when no version would stay in force, since Hudi writers
    fail on a configs folder without one.
    """
    path = config_path(instant)
    if not storage.exists(path):
        return False
    remaining = [other for other in list_instants(storage) if other != instant]
    if select_in_force(remaining, pending_replacecommits) is None:
        raise StorageError(
            f"refusing to delete {storage.uri}/{path}: no committed config version would remain",
            hint="Hudi writers fail on a configs folder without one; if this instant made the table "
            "partition-level, remove the whole folder with the rollback instead",
        )
    storage.delete(path)
    return True
