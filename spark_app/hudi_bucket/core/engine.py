"""Which engine rewrites a table: ours, or Apache Hudi's own procedure (pure: decided on table facts).

``Native`` is this tool's rewrite: shuffle-free where it can be, table versions 6, 8 and 9, no Hudi jars,
but copy-on-write tables without a live metadata table only. ``Hudi`` runs Hudi's
``partition_bucket_index_manager`` procedure (Hudi 1.1+) in the job's Spark session: it keeps the
metadata table and its indexes in sync and reads MERGE_ON_READ file slices through Hudi's own reader.
``Auto`` picks Native where Native can, else Hudi. Plan, approval, preflight and the report stay ours
whichever engine rewrites.
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
    is_merge_on_read: bool
    metadata_table_live: bool


def choose_engine(requested: Engine, facts: _Facts, *, disable_metadata_table: bool = False) -> Engine:
    """The engine that rewrites the table: the one asked for, or for Auto, Native unless the table is
    MERGE_ON_READ or has a live metadata table (one the user did not allow to be disabled)."""
    if requested is not Engine.AUTO:
        return requested
    needs_hudi = facts.is_merge_on_read or (facts.metadata_table_live and not disable_metadata_table)
    return Engine.HUDI if needs_hudi else Engine.NATIVE


def native_repair_hint(requested: Engine, facts: _Facts) -> str:
    """What to do when a plan that repairs a layout came to the Hudi engine, whose procedure repairs
    nothing: only the Native engine repairs, and only copy-on-write tables without a live metadata table."""
    if facts.is_merge_on_read:
        return (
            "no engine repairs a MERGE_ON_READ table: the Native engine rewrites copy-on-write tables only; "
            "repair it with Hudi's own tools (or rewrite the partitions with a correctly configured writer)"
        )
    if requested is Engine.AUTO:
        return (
            "engine Auto chose Hudi for the live metadata table; allow it to be disabled (metadataTable: "
            "Disable, --disable-metadata-table) and Auto picks the Native engine, which repairs"
        )
    return "use the Native engine (engine: Native or Auto, --engine), which repairs"
