"""What the Hudi engine hands Hudi's procedure besides the rules: the write options that keep the table's
metadata indexes (a Hudi writer deletes an index its configuration does not enable)."""

from __future__ import annotations

from hudi_bucket.writing.hudi_engine import index_options


def test_every_index_the_table_has_is_kept_and_nothing_else_is_turned_on() -> None:
    assert index_options(("files", "column_stats", "record_index", "partition_stats")) == {
        "hoodie.metadata.index.column.stats.enable": "true",
        "hoodie.metadata.global.record.level.index.enable": "true",
        "hoodie.metadata.index.partition.stats.enable": "true",
    }
    assert index_options(("files",)) == {}
