"""The table model agrees with Hudi's own facts and with the independent reader hudi-rs."""

from __future__ import annotations

from pathlib import Path

import pytest
from hudi import HudiTableBuilder

from hudi_bucket.core.timeline import TimelineLayout
from hudi_bucket.errors import CorruptTableError, NotAHudiTableError, UnsupportedTableError
from hudi_bucket.hudi.fs_view import list_partitions, load_file_groups
from hudi_bucket.hudi.table import load_table
from hudi_bucket.storage import LocalStorage
from lib.paths import ALL_TABLES
from lib.written_tables import PARTITIONS, TABLES, WITH_DATA

# name -> (table version, layout, merge-on-read, metadata table live, partition fields)
EXPECTED = {
    "cow_v6_complexkeygen_hivestyle": (6, 1, False, False, ("byteField", "shortField")),
    "cow_v6_empty": (6, 1, False, False, ()),
    "cow_v6_nonpartitioned": (6, 1, False, False, ()),
    "cow_v6_simplekeygen_nonhivestyle": (6, 1, False, False, ("byteField",)),
    "cow_v6_simplekeygen_nonhivestyle_overwritetable": (6, 1, False, False, ("byteField",)),
    "cow_v8_complexkeygen_hivestyle": (8, 2, False, False, ("byteField", "shortField")),
    "cow_v8_empty": (8, 2, False, False, ()),
    "cow_v8_nonpartitioned": (8, 2, False, False, ()),
    "cow_v8_simplekeygen_nonhivestyle": (8, 2, False, False, ("byteField",)),
    "cow_v9_txns_nonpart_meta": (9, 2, False, True, ()),
    "cow_v9_txns_simple_meta": (9, 2, False, True, ("region",)),
    "cow_v9_txns_simple_overwrite": (9, 2, False, True, ("region",)),
    "mor_v9_txns_simple_meta": (9, 2, True, True, ("region",)),
}


@pytest.mark.shared
def test_every_fixture_is_described() -> None:
    assert sorted(EXPECTED) == ALL_TABLES


@pytest.mark.parametrize("name", ALL_TABLES)
def test_table_facts(fixture_table, name: str) -> None:
    table = load_table(LocalStorage(fixture_table(name)))
    version, layout, mor, mdt_live, partition_fields = EXPECTED[name]
    assert table.version == version
    assert table.layout is TimelineLayout(layout)
    assert table.is_merge_on_read is mor
    assert table.metadata_table_live is mdt_live
    assert table.metadata_table_exists is mdt_live
    assert table.config.partition_fields == partition_fields
    assert table.timeline.pending() == ()


@pytest.mark.parametrize("name", list(TABLES))
def test_facts_of_the_tables_hudi_writes(written_table, name: str) -> None:
    table = load_table(LocalStorage(written_table(name)))
    shape = TABLES[name]
    assert table.version == shape.version
    assert table.layout is TimelineLayout(1 if shape.version == 6 else 2)
    assert table.is_merge_on_read is shape.merge_on_read
    assert table.metadata_table_live is table.metadata_table_exists is shape.metadata_table
    assert table.config.partition_fields == shape.partition_fields
    assert table.timeline.pending() == ()


def hudi_rs_slices(root: Path) -> set[tuple[str, str, str]]:
    table = HudiTableBuilder.from_base_uri(str(root)).build()
    return {(s.partition_path, s.file_id, s.base_file_name) for s in table.get_file_slices()}


def assert_live_file_groups_equal_hudi_rs(root: Path) -> None:
    storage = LocalStorage(root)
    groups = load_file_groups(storage, load_table(storage))
    ours = {
        (g.partition, g.file_id, g.latest_base_file.file_name if g.latest_base_file else "")
        for gs in groups.values()
        for g in gs
    }
    assert ours == hudi_rs_slices(root)


@pytest.mark.parametrize("name", ALL_TABLES)
def test_live_file_groups_equal_hudi_rs(fixture_table, name: str) -> None:
    assert_live_file_groups_equal_hudi_rs(fixture_table(name))


@pytest.mark.parametrize("name", WITH_DATA)
def test_live_file_groups_of_the_tables_hudi_writes_equal_hudi_rs(written_table, name: str) -> None:
    assert_live_file_groups_equal_hudi_rs(written_table(name))


def test_partitions_are_found_by_their_metafile(fixture_table) -> None:
    nested = LocalStorage(fixture_table("cow_v8_complexkeygen_hivestyle"))
    assert list_partitions(nested) == (
        "byteField=10/shortField=300",
        "byteField=20/shortField=100",
        "byteField=30/shortField=100",
    )
    assert list_partitions(LocalStorage(fixture_table("cow_v8_nonpartitioned"))) == ("",)
    assert list_partitions(LocalStorage(fixture_table("cow_v6_empty"))) == ()


def test_partitions_of_the_tables_hudi_writes_are_found_by_their_metafile(written_table) -> None:
    nested = LocalStorage(written_table("cow_v6_complex_hivestyle"))
    assert list_partitions(nested) == tuple(f"part={p}/sub={s}" for p in PARTITIONS for s in (0, 1))
    assert list_partitions(LocalStorage(written_table("cow_v8_nonpartitioned"))) == ("",)
    assert list_partitions(LocalStorage(written_table("cow_v6_empty"))) == ()


def test_a_table_overwritten_whole_keeps_its_emptied_partitions(fixture_table) -> None:
    storage = LocalStorage(fixture_table("cow_v6_simplekeygen_nonhivestyle_overwritetable"))
    groups = load_file_groups(storage, load_table(storage))
    assert {p: len(g) for p, g in groups.items()} == {"10": 0, "20": 0, "30": 1}


def test_a_table_hudi_overwrote_whole_keeps_its_emptied_partitions(written_table) -> None:
    storage = LocalStorage(written_table("cow_v6_overwritten"))
    groups = load_file_groups(storage, load_table(storage))
    assert {p: len(g) for p, g in groups.items() if not g} == {"10": 0, "20": 0}
    assert groups["30"]


def test_a_folder_that_is_not_a_table_is_refused(tmp_path: Path) -> None:
    (tmp_path / "data.parquet").write_bytes(b"PAR1")
    with pytest.raises(NotAHudiTableError, match=r"\.hoodie/hoodie\.properties"):
        load_table(LocalStorage(tmp_path))


def test_a_corrupt_properties_file_names_the_file(written_table) -> None:
    root = written_table("cow_v8_nonpartitioned")
    properties = root / ".hoodie" / "hoodie.properties"
    properties.write_text("hoodie.table.name=t\nhoodie.table.version=\\u12G4\n")
    with pytest.raises(CorruptTableError, match=r"hoodie\.properties"):
        load_table(LocalStorage(root))
    assert properties.read_text() == "hoodie.table.name=t\nhoodie.table.version=\\u12G4\n"


def test_an_unknown_table_version_is_refused(written_table) -> None:
    root = written_table("cow_v8_nonpartitioned")
    properties = root / ".hoodie" / "hoodie.properties"
    properties.write_text(properties.read_text().replace("hoodie.table.version=8", "hoodie.table.version=5"))
    with pytest.raises(UnsupportedTableError, match="table version 5"):
        load_table(LocalStorage(root))
