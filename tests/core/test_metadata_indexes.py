"""The metadata table's indexes a table has, the record index's kind read from Hudi's index definitions,
and the write settings that keep exactly those indexes."""

from __future__ import annotations

import json

import pytest

from hudi_bucket.core.metadata_indexes import MetadataIndexes, record_index_partitioned
from hudi_bucket.errors import UnsupportedTableError


def definitions(options: dict[str, str] | None, *others: str) -> bytes:
    found = {name: {"indexName": name, "indexType": name, "indexOptions": {}} for name in others}
    if options is not None:
        found["record_index"] = {
            "indexName": "record_index",
            "indexType": "record_index",
            "indexOptions": options,
        }
    return json.dumps({"indexDefinitions": found}).encode()


@pytest.mark.parametrize(
    ("index_definitions", "partitioned"),
    [
        (definitions({"isPartitioned": "true"}, "column_stats"), True),
        (definitions({"isPartitioned": "false"}), False),
        (definitions({}), False),  # a record index defined before Hudi had two kinds: global
        (definitions(None, "column_stats"), False),
        (b"{}", False),
    ],
)
def test_the_record_indexs_kind_is_read_from_its_definition(
    index_definitions: bytes, partitioned: bool
) -> None:
    assert record_index_partitioned(index_definitions) is partitioned


@pytest.mark.parametrize("damaged", [b"{", b"[]", b'{"indexDefinitions": {"record_index": 3}}'])
def test_index_definitions_that_cannot_be_read_are_refused_clearly(damaged: bytes) -> None:
    with pytest.raises(UnsupportedTableError, match="index definitions cannot be read"):
        record_index_partitioned(damaged)


def test_the_settings_turn_on_exactly_the_indexes_the_table_has() -> None:
    settings = MetadataIndexes(("files", "column_stats", "record_index")).settings()
    assert {key for key, on in settings.items() if on} == {
        "hoodie.metadata.index.column.stats.enable",
        "hoodie.metadata.global.record.level.index.enable",
    }
    assert not any(MetadataIndexes(("files",)).settings().values())


def test_a_partitioned_record_index_is_set_as_partitioned_and_never_as_global() -> None:
    settings = MetadataIndexes(("files", "record_index"), record_index_partitioned=True).settings()
    assert settings["hoodie.metadata.record.level.index.enable"] is True
    assert settings["hoodie.metadata.global.record.level.index.enable"] is False
