"""Which engine rewrites a table: ours, or Apache Hudi's own procedure (pure: decided on table facts).

``Native`` is this tool's rewrite: shuffle-free where it can be, table versions 6, 8 and 9, copy-on-write
and MERGE_ON_READ (file slices that are not plain base files are read by Hudi's own file group reader,
see reading.hudi_reads); a live metadata table it keeps through Hudi's own metadata writer where Hudi's
bundle is loaded (spark.metadata_writer), unless its record index is partitioned (core.preflight). ``Hudi``
runs Hudi's ``partition_bucket_index_manager`` procedure (Hudi 1.1+) in the job's Spark session: it keeps
the metadata table and its indexes in sync. ``Auto`` picks Native where Native can, else Hudi. Plan,
approval, preflight and the report stay ours whichever engine rewrites.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol

# The procedure ships with Hudi 1.1, which reads and writes table versions 8 and 9.
HUDI_MIN_TABLE_VERSION = 8


class Engine(StrEnum):
    AUTO = "Auto"
    NATIVE = "Native"
    HUDI = "Hudi"


class _Facts(Protocol):
    @property
    def metadata_table_live(self) -> bool: ...


def choose_engine(
    requested: Engine,
    facts: _Facts,
    *,
    disable_metadata_table: bool = False,
    keeps_metadata_table: bool = False,
) -> Engine:
    """The engine that rewrites the table: the one asked for, or for Auto, Native unless the table has a
    live metadata table that Native cannot keep (``keeps_metadata_table``: Hudi's metadata writer is on
    the classpath, for the table's indexes) and the user did not allow to be disabled."""
    if requested is not Engine.AUTO:
        return requested
    kept_or_let_go = keeps_metadata_table or disable_metadata_table
    return Engine.HUDI if facts.metadata_table_live and not kept_or_let_go else Engine.NATIVE


def native_repair_hint(requested: Engine) -> str:
    """What to do when a plan that repairs a layout came to the Hudi engine, whose procedure repairs
    nothing: only the Native engine repairs, and only tables without a live metadata table."""
    if requested is Engine.AUTO:
        return (
            "engine Auto chose Hudi for a live metadata table the Native engine cannot keep here (no Hudi "
            "bundle on the job's classpath, or a partitioned record index); run the job image where it is the "
            "bundle, or allow the metadata table to be disabled "
            "(metadataTable: Disable, --disable-metadata-table), and Auto picks the Native engine, which "
            "repairs"
        )
    return "use the Native engine (engine: Native or Auto, --engine), which repairs"
