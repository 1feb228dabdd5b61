"""The last check before a rewrite completes names every column and record it would lose."""

from __future__ import annotations

import pytest

from hudi_bucket.core.completeness import check_complete, check_recorded_schema, shortfalls
from hudi_bucket.errors import IncompleteRewriteError, RecordedSchemaError

SCHEMA = ["_hoodie_record_key", "key", "amount", "note"]


def test_a_complete_rewrite_passes() -> None:
    check_complete(
        schema_columns=SCHEMA,
        written_columns=[*SCHEMA, "extra"],
        read_rows={"d=1": 3, "d=2": 5},
        written_rows={"d=2": 5, "d=1": 3},
    )


def test_each_missing_column_and_each_partition_short_of_records_is_named() -> None:
    found = shortfalls(
        schema_columns=SCHEMA,
        written_columns=["_hoodie_record_key", "key"],
        read_rows={"d=1": 3, "d=2": 5, "": 1},
        written_rows={"d=1": 3, "d=2": 4, "d=3": 2},
    )
    assert found == [
        "the files written lack the column(s) ['amount', 'note'] of the table's schema",
        "partition the table (not partitioned): read 1 record(s), wrote 0",
        "partition 'd=2': read 5 record(s), wrote 4",
        "partition 'd=3': read 0 record(s), wrote 2",
    ]


def test_an_incomplete_rewrite_is_refused_saying_nothing_was_committed() -> None:
    with pytest.raises(IncompleteRewriteError) as refused:
        check_complete(schema_columns=SCHEMA, written_columns=SCHEMA[:3], read_rows={}, written_rows={})
    assert "lack the column(s) ['note']" in str(refused.value)
    assert "nothing was committed" in str(refused.value)


def test_a_recorded_schema_without_the_fields_records_are_keyed_by_is_refused() -> None:
    needed = {"record key": ("key",), "partition": ("day",), "ordering": ("meta.ts",)}
    check_recorded_schema(["key", "day", "meta", "amount"], needed, bootstrapped=False)  # nested by its top

    with pytest.raises(RecordedSchemaError) as refused:
        check_recorded_schema(["x"], needed, bootstrapped=True)
    said = str(refused.value)
    assert (
        "lacks its record key field(s) ['key'], partition field(s) ['day'], ordering field(s) ['meta.ts']"
        in said
    )
    assert "spark.emptyDataFrame" in said  # why a bootstrapped table's schema may be another frame's
