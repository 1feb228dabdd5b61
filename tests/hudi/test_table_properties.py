"""hoodie.properties updates survive a crash at any step, as Hudi's own protocol does."""

from __future__ import annotations

import pytest

from hudi_bucket.core.properties import parse_properties, table_checksum
from hudi_bucket.errors import CorruptTableError
from hudi_bucket.hudi.table import disable_metadata_table, load_table
from hudi_bucket.hudi.table_properties import (
    BACKUP_FILE,
    PROPERTIES_FILE,
    read_table_properties,
    write_table_properties,
)
from hudi_bucket.storage import LocalStorage


def test_an_update_keeps_order_and_a_valid_checksum(written_table) -> None:
    storage = LocalStorage(written_table("cow_v8"))
    before = read_table_properties(storage)
    write_table_properties(storage, before.set("hoodie.table.name", "renamed"))
    after = parse_properties(storage.read(PROPERTIES_FILE))
    assert list(after) == list(before)
    assert after["hoodie.table.name"] == "renamed"
    assert after["hoodie.table.checksum"] == str(table_checksum(after))
    assert not storage.exists(BACKUP_FILE)


def test_a_partial_write_falls_back_to_the_backup(written_table) -> None:
    storage = LocalStorage(written_table("cow_v8"))
    original = storage.read(PROPERTIES_FILE)
    # A crash after the backup was written and while the file was being rewritten:
    storage.write(BACKUP_FILE, original)
    storage.write(PROPERTIES_FILE, original[: len(original) // 3], overwrite=True)
    assert load_table(storage).name == "cow_v8"
    storage.delete(PROPERTIES_FILE)
    assert load_table(storage).name == "cow_v8"


def test_a_wrong_checksum_without_backup_is_corrupt(written_table) -> None:
    storage = LocalStorage(written_table("cow_v8"))
    text = storage.read(PROPERTIES_FILE).replace(b"hoodie.table.checksum=", b"hoodie.table.checksum=9")
    storage.write(PROPERTIES_FILE, text, overwrite=True)
    with pytest.raises(CorruptTableError, match="checksum"):
        load_table(storage)


def test_disabling_the_metadata_table_is_what_hudi_does(written_table) -> None:
    root = written_table("cow_v9_meta")
    storage = LocalStorage(root)
    table = disable_metadata_table(storage, load_table(storage))
    assert not table.metadata_table_live
    assert not table.metadata_table_exists
    assert not (root / ".hoodie" / "metadata").exists()
    assert table.config.props["hoodie.table.metadata.partitions"] == ""
    assert table.config.props["hoodie.table.metadata.partitions.inflight"] == ""
