"""Refuse a rewrite that could lose data before anything is written, saying what to do instead.

Every check looks at facts already read (table config, timeline); the result lists every problem at
once, so a user fixes them in one round. Two moments matter: before the rewrite (``preflight``), and
just before our replacecommit completes (``concurrent_writes``), when a writer that ignored the "stop
writers" rule may have changed the partitions we rewrote.

A plan is made while the writers run (they are paused for the apply only), so it notes other writers'
pending instants instead of refusing them; the apply, which writes, refuses them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from enum import StrEnum

from hudi_bucket.core.engine import HUDI_MIN_TABLE_VERSION, Engine, choose_engine
from hudi_bucket.core.report_json import JsonObject
from hudi_bucket.core.timeline import Action, Instant, Timeline
from hudi_bucket.errors import PreflightError

PARQUET = "PARQUET"
METADATA_TABLE_NOTE = (
    "metadata table will be disabled (removed the way Hudi does); re-enable it with Hudi after the rescale"
)
_NAMED = 10  # foreign pending instants a finding names; the rest are counted
# Completed actions that change no live rows; any other completing beside our rewrite may have.
_HARMLESS_ACTIONS = frozenset({Action.CLEAN, Action.SAVEPOINT})


class Check(StrEnum):
    BASE_FILE_FORMAT = "base-file-format"
    DROPPED_PARTITION_COLUMNS = "dropped-partition-columns"
    METADATA_TABLE = "metadata-table"
    PENDING_INSTANTS = "pending-instants"
    TABLE_VERSION = "table-version"
    SECONDARY_INDEX = "secondary-index"


@dataclass(frozen=True)
class Finding:
    """One reason to refuse: what is wrong, and what the user can do about it."""

    check: Check
    message: str
    fix: str

    def __str__(self) -> str:
        return f"{self.message} ({self.fix})"


@dataclass(frozen=True)
class TableFacts:
    """What the checks need to know of a table, and nothing that needs storage to find out."""

    table_version: int
    metadata_table_live: bool
    drop_partition_columns: bool
    pending: tuple[Instant, ...] = ()
    base_file_format: str = PARQUET
    secondary_indexes: tuple[str, ...] = ()  # names, as the metadata table's partitions list them
    record_index_partitioned: bool = False  # its record index is the partitioned kind (core.metadata_indexes)


@dataclass(frozen=True)
class PreflightResult:
    """Refusals, plus what the rewrite must do first: roll back ``to_clean_up`` (our own pending
    instants, left by an earlier attempt) and, if asked, disable the metadata table."""

    refusals: tuple[Finding, ...]
    to_clean_up: tuple[Instant, ...] = ()
    disable_metadata_table: bool = False
    notes: tuple[str, ...] = ()
    engine: Engine = Engine.NATIVE  # the engine that rewrites (never Auto)

    @property
    def ok(self) -> bool:
        return not self.refusals

    def raise_if_refused(self) -> None:
        if self.refusals:
            problems = tuple(str(finding) for finding in self.refusals)
            raise PreflightError("refusing to rewrite the table: " + "; ".join(problems), problems=problems)

    def to_dict(self) -> JsonObject:
        """JSON-safe, for the job report."""
        return {
            "ok": self.ok,
            "refusals": [{"check": f.check.value, "message": f.message, "fix": f.fix} for f in self.refusals],
            "to_clean_up": [_describe(instant) for instant in self.to_clean_up],
            "disable_metadata_table": self.disable_metadata_table,
            "notes": list(self.notes),
            "engine": self.engine.value,
        }


def preflight(
    facts: TableFacts,
    *,
    our_pending: frozenset[str],
    disable_metadata_table: bool,
    engine: Engine = Engine.NATIVE,
    others_pending_noted: bool = False,
    metadata_writer: bool = False,
) -> PreflightResult:
    """Check a table before rewriting it. ``our_pending`` holds the timestamps of instants we started;
    ``disable_metadata_table`` is the user's consent to turn a live metadata table off; ``engine`` is
    the one asked for (Auto: chosen here, see core.engine). With ``others_pending_noted`` (a plan,
    which writes nothing), pending instants that are not ours become a note instead of a refusal.
    ``metadata_writer``: Hudi's metadata writer is on the job's classpath, so that the Native engine
    keeps a live metadata table (of every table version: Hudi 1.2.0 has a writer for version 6 too), unless
    its record index is partitioned: Hudi 1.2.0's metadata writer fails on one outside its own write client
    (a reader of the files index shipped to executors without its files), where Hudi's procedure keeps it."""
    native_keeps = metadata_writer and not facts.record_index_partitioned
    engine = choose_engine(
        engine, facts, disable_metadata_table=disable_metadata_table, keeps_metadata_table=native_keeps
    )
    if engine is Engine.HUDI:  # Hudi's procedure reads every table shape Hudi writes
        shape = [_hudi_table_version(facts), _secondary_indexes(facts)]
        disabling = False
    else:
        shape = [
            _base_file_format(facts),
            _dropped_partition_columns(facts),
            None if disable_metadata_table or native_keeps else _metadata_table(facts, metadata_writer),
        ]
        disabling = disable_metadata_table and facts.metadata_table_live
    others = _foreign_pending(facts, our_pending)
    noted = others if others_pending_noted else None
    refusals = [f for f in (*shape, None if noted else others) if f is not None]
    ours = tuple(instant for instant in facts.pending if instant.timestamp in our_pending)
    notes = [f"our pending instant {_describe(i)} will be rolled back first" for i in ours]
    notes += [f"{noted.message}: planned all the same; the apply refuses them ({noted.fix})"] if noted else []
    notes += [METADATA_TABLE_NOTE] if disabling else []
    return PreflightResult(tuple(refusals), ours, disabling, tuple(notes), engine)


def completed_after(before: Timeline, now: Timeline, our_instant: str) -> tuple[Instant, ...]:
    """Instants other than ours that completed after ``before`` was read.

    ``before`` is the timeline read just before our instant was requested (after rolling back our own
    leftovers). Comparing states across the two readings works in both layouts (completion times
    exist only in layout 2); an instant that completed before ``before`` was read is not listed.
    """
    done_before = {instant.timestamp for instant in before.completed()}
    return tuple(
        instant
        for instant in now.completed()
        if instant.timestamp != our_instant and instant.timestamp not in done_before
    )


def concurrent_writes(
    before: Timeline,
    now: Timeline,
    our_instant: str,
    partitions: Collection[str],
    touched: Mapping[str, Collection[str]],
) -> tuple[Instant, ...]:
    """Instants that completed beside our rewrite and may have changed rows of ``partitions``: the
    apply job rolls back instead of completing when any is found.

    ``touched`` maps an instant's timestamp to the partitions it wrote (read by the caller from its
    commit metadata); an instant missing from it is taken to touch every partition, since unknown is
    unsafe. Cleans and savepoints change no live rows and never count.
    """
    ours = frozenset(partitions)
    return tuple(
        instant
        for instant in completed_after(before, now, our_instant)
        if instant.action not in _HARMLESS_ACTIONS
        and (instant.timestamp not in touched or not ours.isdisjoint(touched[instant.timestamp]))
    )


def _secondary_indexes(facts: TableFacts) -> Finding | None:
    if not facts.secondary_indexes:
        return None
    names = ", ".join(facts.secondary_indexes)
    return Finding(
        Check.SECONDARY_INDEX,
        f"the table has secondary index(es) {names}, and Hudi's procedure refuses to overwrite "
        "partitions of such a table (Hudi 1.2: no INSERT_OVERWRITE on a secondary index)",
        f"drop them (DROP INDEX {facts.secondary_indexes[0]} ON <table>), rescale, then create them again",
    )


def _hudi_table_version(facts: TableFacts) -> Finding | None:
    if facts.table_version >= HUDI_MIN_TABLE_VERSION:
        return None
    return Finding(
        Check.TABLE_VERSION,
        f"the table is version {facts.table_version}; Hudi's partition_bucket_index_manager procedure "
        f"rescales table versions {HUDI_MIN_TABLE_VERSION} and later",
        "upgrade the table with Hudi 1.x first, or use the Native engine (engine: Native or Auto; it keeps "
        "a live metadata table through Hudi's own writer of the table's version)",
    )


def _base_file_format(facts: TableFacts) -> Finding | None:
    if facts.base_file_format.upper() == PARQUET:
        return None
    return Finding(
        Check.BASE_FILE_FORMAT,
        f"the table's base files are {facts.base_file_format}; only {PARQUET} base files can be rewritten",
        "use the Hudi engine (engine: Hudi or Auto, --engine)",
    )


def _dropped_partition_columns(facts: TableFacts) -> Finding | None:
    if not facts.drop_partition_columns:
        return None
    return Finding(
        Check.DROPPED_PARTITION_COLUMNS,
        "the table drops partition columns from its data files "
        "(hoodie.datasource.write.drop.partition.columns=true), so a rewrite cannot be verified "
        "(neither this tool nor hudi-rs reads such tables)",
        "use the Hudi engine (engine: Hudi or Auto, --engine)",
    )


def _metadata_table(facts: TableFacts, metadata_writer: bool) -> Finding | None:
    if not facts.metadata_table_live:
        return None
    if metadata_writer:  # the writer is there, the table's record index is the kind it cannot keep
        return Finding(
            Check.METADATA_TABLE,
            "the table's record index is partitioned (hoodie.metadata.record.level.index.enable), which the "
            "Native engine cannot keep: Hudi 1.2.0's metadata writer fails on it outside Hudi's own write "
            "client, and a record index told the other kind would point at the old file groups",
            "use the Hudi engine (engine: Hudi or Auto), whose procedure keeps it, or allow the metadata "
            "table to be disabled (metadataTable: Disable, or --disable-metadata-table)",
        )
    return Finding(
        Check.METADATA_TABLE,
        "the metadata table is live (hoodie.table.metadata.partitions lists 'files') and the Native engine "
        "cannot keep it: Hudi's Spark bundle, whose metadata writer keeps it, is not on the job's classpath "
        "(HBO_HUDI_BUNDLE); readers list files from it, so rows of rewritten partitions would vanish",
        "run the job image (it carries Hudi's bundle), use the Hudi engine (engine: Hudi or Auto), or allow "
        "the metadata table to be disabled (metadataTable: Disable, or --disable-metadata-table)",
    )


def _foreign_pending(facts: TableFacts, our_pending: frozenset[str]) -> Finding | None:
    foreign = [instant for instant in facts.pending if instant.timestamp not in our_pending]
    if not foreign:
        return None
    named = ", ".join(_describe(instant) for instant in foreign[:_NAMED])
    rest = f" and {len(foreign) - _NAMED} more" if len(foreign) > _NAMED else ""
    return Finding(
        Check.PENDING_INSTANTS,
        f"{len(foreign)} pending instant(s) not started by this tool: {named}{rest}",
        "let their writers finish, or roll them back with Hudi; stop every writer during a rescale",
    )


def _describe(instant: Instant) -> str:
    return f"{instant.timestamp} {instant.action.value} ({instant.state.name.lower()})"
