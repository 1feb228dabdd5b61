"""What a rewrite must hold, checked on both sides (pure: the callers read the schemas and counts).

Before anything is written, the table's recorded schema (the latest commit's, which every reader and
the rewrite take the columns from) must hold the fields its records are keyed, partitioned and ordered
by: a schema without them is not the records' (a bootstrap given a frame of other columns records that
frame's), and neither Hudi's reader nor a rewrite can be trusted with it.

Before a rewrite's instant completes, what it wrote must hold every column of the table's schema, and
each partition exactly the records it read (after a key's losing copies, when it resolved some). This
stands behind every way of reading a file group: a reader that missed a column (a bootstrap skeleton read
without its source file) or a row becomes a rolled-back instant and a message naming what is missing,
never a committed table that lost data.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from hudi_bucket.errors import IncompleteRewriteError, RecordedSchemaError

# Measured with Hudi 1.2.0: a bootstrap records the schema of the frame it is given as the table's, and
# Hudi's reader then fails on the skeletons (an AssertionError in its Parquet reader) when that frame's
# columns are not the source files'.
BOOTSTRAP_SCHEMA_HINT = (
    "the table is bootstrapped: Hudi records the schema of the frame the bootstrap was given as the table's "
    "(extraMetadata.schema of its commit 00000000000001), and its reader fails when that is not the source "
    "files' schema; Hudi's guide bootstraps from a frame without columns (Scala's spark.emptyDataFrame)"
)


def check_recorded_schema(
    schema_columns: Collection[str], needed: Mapping[str, Collection[str]], *, bootstrapped: bool
) -> None:
    """Refuse a recorded schema (its top-level column names) that lacks a field of ``needed`` (a role:
    "record key", "partition", "ordering", to the fields it names; a nested field by its top column)."""
    held = set(schema_columns)
    missing = {
        role: [f for f in fields if f.split(".")[0] not in held] for role, fields in needed.items() if fields
    }
    said = [f"{role} field(s) {fields}" for role, fields in missing.items() if fields]
    if said:
        raise RecordedSchemaError(
            f"the table's recorded schema (columns {sorted(held)}) lacks its {', '.join(said)}",
            hint=f"{RecordedSchemaError.hint}; {BOOTSTRAP_SCHEMA_HINT}" if bootstrapped else None,
        )


def shortfalls(
    *,
    schema_columns: Collection[str],
    written_columns: Collection[str],
    read_rows: Mapping[str, int],
    written_rows: Mapping[str, int],
) -> list[str]:
    """What the written files lack, in words: columns of ``schema_columns`` (the table's, meta columns
    included) that ``written_columns`` (the files' own) miss, and each partition whose written records
    differ in number from those read. Empty when nothing is missing."""
    written = set(written_columns)
    missing = [c for c in schema_columns if c not in written]
    problems = [f"the files written lack the column(s) {missing} of the table's schema"] if missing else []
    for partition in sorted(set(read_rows) | set(written_rows)):
        read, wrote = read_rows.get(partition, 0), written_rows.get(partition, 0)
        if read != wrote:
            where = repr(partition) if partition else "the table (not partitioned)"
            problems.append(f"partition {where}: read {read} record(s), wrote {wrote}")
    return problems


def check_complete(
    *,
    schema_columns: Collection[str],
    written_columns: Collection[str],
    read_rows: Mapping[str, int],
    written_rows: Mapping[str, int],
) -> None:
    """Raise IncompleteRewriteError listing every shortfall, if any."""
    problems = shortfalls(
        schema_columns=schema_columns,
        written_columns=written_columns,
        read_rows=read_rows,
        written_rows=written_rows,
    )
    if problems:
        raise IncompleteRewriteError("refusing to complete the rewrite: " + "; ".join(problems))
