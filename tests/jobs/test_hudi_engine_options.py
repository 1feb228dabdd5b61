"""What the Hudi engine hands Hudi's procedure besides the rules: the write options that keep the table's
metadata indexes (a Hudi writer deletes an index its configuration does not enable), the record index of
the table's own kind."""

from __future__ import annotations

from hudi_bucket.core.metadata_indexes import MetadataIndexes
from hudi_bucket.writing.hudi_engine import index_options


def test_every_index_the_table_has_is_kept_and_nothing_else_is_turned_on() -> None:
    indexes = MetadataIndexes(("files", "column_stats", "record_index", "partition_stats"))
    assert index_options(indexes) == {
        "hoodie.metadata.index.column.stats.enable": "true",
        "hoodie.metadata.global.record.level.index.enable": "true",
        "hoodie.metadata.index.partition.stats.enable": "true",
    }
    assert index_options(MetadataIndexes(("files",))) == {}


def test_a_partitioned_record_index_is_kept_as_partitioned() -> None:
    indexes = MetadataIndexes(("files", "record_index"), record_index_partitioned=True)
    assert index_options(indexes) == {"hoodie.metadata.record.level.index.enable": "true"}
