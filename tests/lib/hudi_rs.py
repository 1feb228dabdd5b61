"""Reading a table with hudi-rs (PyPI `hudi`): the independent Hudi reader the tests compare against.

One reader, two shapes: ``snapshot`` (everything hudi-rs reads, as Arrow) and ``records`` (rows as
dicts without the columns a test leaves out, in one stable order whatever the column types).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
from hudi import HudiTableBuilder

from hudi_bucket.core.metafields import META_COLUMNS

# The meta columns a rewrite changes; the record key and partition path stay.
REWRITTEN = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name")


def snapshot(root: Path | str, storage_options: Mapping[str, str] | None = None) -> pa.Table:
    """The table's latest snapshot as hudi-rs reads it (no rows: an empty table without columns). An
    ``s3a://`` URI (Hadoop's scheme) is read as ``s3://``, the one hudi-rs knows."""
    uri = re.sub(r"^s3a://", "s3://", str(root))
    builder = HudiTableBuilder.from_base_uri(uri).with_storage_options(dict(storage_options or {}))
    batches = builder.build().read()
    return pa.Table.from_batches(batches) if batches else pa.table({})


def records(
    root: Path | str,
    drop: Iterable[str] = META_COLUMNS,
    columns: Iterable[str] | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Every row hudi-rs reads, without the ``drop`` columns (or only ``columns``), in a stable order."""
    table = snapshot(root, storage_options)
    if columns is not None:
        table = table.select(list(columns))
    table = table.drop_columns([c for c in drop if c in table.column_names])
    return ordered(table.to_pylist())


def ordered(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows in one stable order, whatever their column types."""
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=repr))


def latest_file_slices(root: Path | str) -> dict[tuple[str, str], tuple[str, list[str]]]:
    """(partition, file id) -> the base file name and the log file names of its latest slice, as hudi-rs
    lists them (an empty name: no base file)."""
    table = HudiTableBuilder.from_base_uri(str(root)).build()
    return {
        (s.partition_path, s.file_id): (s.base_file_name, sorted(s.log_file_names))
        for s in table.get_file_slices()
    }
