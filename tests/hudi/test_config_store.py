"""The hashing_config store keeps the versions where Hudi looks and never leaves Hudi writers stranded."""

from __future__ import annotations

from pathlib import Path

import pytest

from hudi_bucket.core.hashing_config import INITIAL_INSTANT, HashingConfig
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.errors import InvalidHashingConfigError, InvalidRuleError, StorageError
from hudi_bucket.hudi import config_store
from hudi_bucket.storage import LocalStorage

RULES = BucketRules.parse("dt=2025-11-1[01],64", 8)
T1, T2, T3 = "20250101000000000", "20250201000000000", "20250301000000000"


@pytest.fixture
def storage(tmp_path: Path) -> LocalStorage:
    return LocalStorage(tmp_path)


def version(instant: str, expressions: str = "dt=2025-11-1[01],64") -> HashingConfig:
    return HashingConfig(expressions, 8, "regex", 1, instant)


def test_folders_and_file_names_are_hudis() -> None:
    assert config_store.config_path(T1) == (
        ".hoodie/.bucket_index/partition_bucket_index_meta/configs/20250101000000000.hashing_config"
    )
    assert config_store.config_path(T1, archived=True) == (
        ".hoodie/.bucket_index/partition_bucket_index_meta/archive/20250101000000000.hashing_config"
    )


def test_a_written_version_reads_back_and_is_hudis_bytes(storage: LocalStorage, tmp_path: Path) -> None:
    config_store.write_config(storage, version(T1))
    assert config_store.read_config(storage, T1) == version(T1)
    assert (tmp_path / config_store.config_path(T1)).read_bytes() == version(T1).to_json()
    assert config_store.list_instants(storage) == [T1]


def test_a_version_is_never_overwritten(storage: LocalStorage) -> None:
    config_store.write_config(storage, version(T1))
    with pytest.raises(StorageError, match="already exists: config versions are never overwritten"):
        config_store.write_config(storage, version(T1, "other,2"))
    assert config_store.read_config(storage, T1) == version(T1)


@pytest.mark.parametrize("instant", ["", "2025.1", "../x", "abc"])
def test_only_instants_name_versions(storage: LocalStorage, instant: str) -> None:
    with pytest.raises(InvalidHashingConfigError, match="not an instant"):
        config_store.write_config(storage, version(instant))


def test_expressions_hudi_cannot_read_are_never_written(storage: LocalStorage) -> None:
    with pytest.raises(InvalidRuleError, match="rule 2"):
        config_store.write_config(storage, version(T1, "a,1;;b,2"))
    assert not config_store.is_partition_level(storage)


def test_initial_version_uses_the_initial_instant(storage: LocalStorage) -> None:
    assert not config_store.is_partition_level(storage)
    config = config_store.create_initial_config(storage, RULES)
    assert config == HashingConfig.from_rules(RULES, INITIAL_INSTANT)
    assert config_store.is_partition_level(storage)
    assert config_store.load_in_force(storage, set()) == config


def test_initial_version_is_refused_once_versions_exist(storage: LocalStorage) -> None:
    config_store.write_config(storage, version(T1))
    with pytest.raises(StorageError, match=r"already holds versions \['20250101000000000'\]"):
        config_store.create_initial_config(storage, RULES)


def test_a_table_without_configs_folder_has_no_version_in_force(storage: LocalStorage) -> None:
    assert config_store.load_in_force(storage, set()) is None


def test_version_in_force_skips_pending_replacecommits(storage: LocalStorage) -> None:
    for instant in (INITIAL_INSTANT, T2, T1):
        config_store.write_config(storage, version(instant))
    assert config_store.load_in_force(storage, set()) == version(T2)
    assert config_store.load_in_force(storage, {T2}) == version(T1)
    assert config_store.load_in_force(storage, {T1, T2}) == version(INITIAL_INSTANT)


def test_a_configs_folder_without_committed_version_is_reported(
    storage: LocalStorage, tmp_path: Path
) -> None:
    (tmp_path / config_store.CONFIGS_FOLDER).mkdir(parents=True)
    with pytest.raises(InvalidHashingConfigError, match="holds no committed version"):
        config_store.load_in_force(storage, set())
    config_store.write_config(storage, version(T1))
    with pytest.raises(InvalidHashingConfigError, match="Hudi writers fail on this table"):
        config_store.load_in_force(storage, {T1})


@pytest.mark.parametrize("name", ["20250101000000000.hashing_config.bak", "notes.txt", "2025", ".x.tmp"])
def test_stray_entries_in_the_configs_folder_are_reported(
    storage: LocalStorage, tmp_path: Path, name: str
) -> None:
    config_store.write_config(storage, version(T1))
    (tmp_path / config_store.CONFIGS_FOLDER / name).write_text("x")
    with pytest.raises(InvalidHashingConfigError, match=f"{name} is not an <instant>.hashing_config file"):
        config_store.list_instants(storage)


def test_a_file_holding_another_instant_is_reported(storage: LocalStorage, tmp_path: Path) -> None:
    (tmp_path / config_store.CONFIGS_FOLDER).mkdir(parents=True)
    (tmp_path / config_store.config_path(T2)).write_bytes(version(T1).to_json())
    with pytest.raises(InvalidHashingConfigError, match=f"{T2}.hashing_config: holds instant '{T1}'"):
        config_store.read_config(storage, T2)


def test_malformed_file_errors_name_the_file(storage: LocalStorage, tmp_path: Path) -> None:
    (tmp_path / config_store.CONFIGS_FOLDER).mkdir(parents=True)
    (tmp_path / config_store.config_path(T1)).write_bytes(b"{}")
    with pytest.raises(InvalidHashingConfigError, match=f"{tmp_path}/.*/{T1}.hashing_config: field"):
        config_store.load_in_force(storage, set())


def test_archiving_moves_all_but_the_newest_version_older_than_the_first_active_commit(
    storage: LocalStorage,
) -> None:
    for instant in (INITIAL_INSTANT, T1, T2, T3):
        config_store.write_config(storage, version(instant))
    assert config_store.archive_old_versions(storage, "20250215000000000") == [INITIAL_INSTANT, T1]
    assert config_store.list_instants(storage) == [T2, T3]
    assert config_store.list_instants(storage, archived=True) == [INITIAL_INSTANT, T1]
    assert config_store.read_config(storage, T1, archived=True) == version(T1)
    assert config_store.archive_old_versions(storage, "20250215000000000") == []
    assert config_store.load_in_force(storage, set()) == version(T3)


def test_rollback_deletes_the_version_and_the_previous_one_is_in_force_again(storage: LocalStorage) -> None:
    config_store.write_config(storage, version(T1))
    config_store.write_config(storage, version(T2))
    assert config_store.delete_config(storage, T2, {T2})
    assert config_store.list_instants(storage) == [T1]
    assert config_store.load_in_force(storage, set()) == version(T1)


def test_deleting_an_absent_version_is_a_no_op(storage: LocalStorage) -> None:
    config_store.write_config(storage, version(T1))
    assert not config_store.delete_config(storage, T2, {T2})
    assert config_store.list_instants(storage) == [T1]


def test_a_delete_that_would_leave_no_version_in_force_is_refused(storage: LocalStorage) -> None:
    config_store.write_config(storage, version(T1))
    config_store.write_config(storage, version(T2))
    with pytest.raises(StorageError, match="no committed config version would remain"):
        config_store.delete_config(storage, T2, {T1, T2})  # T1 is still pending too
    config_store.delete_config(storage, T1, {T1})
    with pytest.raises(StorageError, match="no committed config version would remain"):
        config_store.delete_config(storage, T2, {T2})
    assert config_store.list_instants(storage) == [T2]
