"""`write`: insert or upsert a dataset into a bucket-indexed COW table, laid out by the rules in force.

With ``create`` it makes the table first (table version 8 or 9, no metadata table, an initial
hashing_config when rules are given, else the bucket count recorded in ``hoodie.properties``): that is
also how an existing plain Parquet dataset is onboarded (bootstrap, RFC-12's full-record mode). Every
refusal comes before anything is written, and before a new table is created: a table whose layout is
not a bucket layout of its counts (any partition), a bucket count other than the table's, a dataset
whose columns or column types differ from the table's (nullability aside; no cast is made), records
without a key, an ordering field other than the table's, a MERGE_ON_READ table.

Records get Hudi's record key and partition path; each bucket a record lands in is rewritten as one new
base file of its file group (copy-on-write), holding the group's old records too. An upsert merges by
the table's merge mode: under EVENT_TIME_ORDERING a stored record with a greater ordering value stays
(ties go to the incoming one), under COMMIT_TIME_ORDERING the incoming record wins. One commit instant,
rolled back on any failure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hudi_bucket.bucketing.bucket_ids import bucket_id_column, key_taken_whole, num_buckets_column
from hudi_bucket.checks.preconditions import check_table, roll_back_our_leftovers
from hudi_bucket.contract.requests import WriteOptions
from hudi_bucket.core.buckets import BUCKET_ID_DIGITS, bucket_id_from_file_id, is_bucket_file_id
from hudi_bucket.core.commits import INSERT, UPSERT, CommitMetadata, WriteStat
from hudi_bucket.core.filegroups import FileGroup
from hudi_bucket.core.metafields import FILE_NAME, META_COLUMNS, PARTITION_PATH, RECORD_KEY
from hudi_bucket.core.properties import Properties, TableConfig
from hudi_bucket.core.report_json import JsonObject
from hudi_bucket.core.rules import MAX_BUCKETS, BucketRules
from hudi_bucket.core.timeline import Action
from hudi_bucket.errors import (
    InvalidBucketCountError,
    NotAHudiTableError,
    NotBucketIndexedError,
    SourceSchemaError,
    TableMismatchError,
    UnsupportedTableError,
)
from hudi_bucket.hudi import config_store
from hudi_bucket.hudi.fs_view import load_file_groups
from hudi_bucket.hudi.table import timeline_store
from hudi_bucket.hudi.table_creation import (
    EVENT_TIME_ORDERING,
    create_table,
    merge_mode,
    new_table_properties,
    recorded_num_buckets,
    write_partition_metadata,
)
from hudi_bucket.reading.source import KEY_COLUMNS, keyed_records, read_source, table_columns
from hudi_bucket.reading.table_files import TableFiles, table_files
from hudi_bucket.spark.avro_schema import to_avro_json
from hudi_bucket.spark.context import TableContext
from hudi_bucket.spark.java_regex import JavaRegexMatcher
from hudi_bucket.storage import storage_for
from hudi_bucket.writing.bucket_files import ExistingGroup, write_bucket_files
from hudi_bucket.writing.instants import our_instant, refuse_if_taken_away

NEW_TABLE_BUCKETS = 4  # a new table's bucket count when none is given
_REPAIR_HINT = "run `verify`, then `apply` the rules to repair the layout before writing"


@dataclass(frozen=True)
class WriteResult:
    instant: str
    created: bool
    files_written: int
    rows_written: int
    partitions: int

    def to_dict(self) -> JsonObject:
        return {
            "instant": self.instant,
            "created": self.created,
            "filesWritten": self.files_written,
            "rowsWritten": self.rows_written,
            "partitions": self.partitions,
        }


@dataclass(frozen=True)
class _Layout:
    """The rules that give each partition its bucket count (a plain table's: no rule, its one count as
    the default), and the live file group of each (partition, bucket)."""

    rules: BucketRules
    groups: dict[tuple[str, int], FileGroup]


def write(spark: Any, uri: str, options: WriteOptions, *, rows: Any = None) -> WriteResult:
    """Write ``rows`` (a DataFrame; read from ``options.source`` when None) into the table at ``uri``."""
    rows = read_source(spark, options.source, options.format) if rows is None else rows
    rows = rows.drop(*[c for c in rows.columns if c in META_COLUMNS])
    try:
        ctx = TableContext.open(spark, uri)
    except NotAHudiTableError:
        if not options.create:
            raise
        return _create_and_write(spark, uri, options, rows)
    ctx, _ = roll_back_our_leftovers(ctx)
    check_table(ctx)
    if ctx.table.is_merge_on_read:
        # A write rewrites each touched file group's base file whole: a MERGE_ON_READ group's log files
        # (updates, deletes) would be left behind it.
        raise UnsupportedTableError(
            f"{uri} is a MERGE_ON_READ table; `write` writes copy-on-write tables only",
            hint="write to it with Hudi's own writer (the options `apply` printed); `apply` rescales it",
        )
    layout = _layout(ctx, options)
    bases = [g.latest_base_file for g in layout.groups.values() if g.latest_base_file]
    stored = table_files(ctx, bases) if bases else None
    columns = table_columns(ctx, stored.columns if stored else None, rows)
    keyed = keyed_records(rows.select(*columns), ctx.table.config, options.ordering_field, options.is_upsert)
    return _commit(ctx, keyed, columns, layout, options, stored)


def _create_and_write(spark: Any, uri: str, options: WriteOptions, rows: Any) -> WriteResult:
    """Create the table, then write its first commit; every check comes before the table exists."""
    props, rules = _new_table(spark, uri, options, rows)
    keyed = keyed_records(rows, TableConfig(props), options.ordering_field, options.is_upsert)
    storage = storage_for(uri, spark)
    create_table(storage, props)
    if rules:
        config_store.create_initial_config(storage, rules)
    ctx = TableContext.open(spark, uri)
    return _commit(ctx, keyed, tuple(rows.columns), _layout(ctx, options), options, None, created=True)


def _new_table(
    spark: Any, uri: str, options: WriteOptions, rows: Any
) -> tuple[Properties, BucketRules | None]:
    """The properties and rules (None: a plain bucket index) of the table to create, all checked."""
    name = options.table_name or uri.rstrip("/").rsplit("/", 1)[-1]
    fields = (*options.record_key, *options.partition_fields, *filter(None, (options.ordering_field,)))
    missing = [f for f in fields if f not in rows.columns]
    if not options.record_key or missing:
        raise SourceSchemaError(
            f"record key / partition / ordering fields {missing or '(none given)'} not in the dataset"
        )
    default = options.default_buckets or NEW_TABLE_BUCKETS
    rules = BucketRules.parse(options.expressions, default) if options.expressions else None
    if rules:
        rules.validate(JavaRegexMatcher(spark._jvm))
    else:
        _check_bucket_count(default)
    props = new_table_properties(
        table_name=name,
        table_version=options.table_version,
        record_key_fields=options.record_key,
        partition_fields=options.partition_fields,
        hive_style=options.hive_style,
        url_encode=options.url_encode_partitions,
        ordering_fields=(options.ordering_field,) if options.ordering_field else (),
        create_schema=to_avro_json(rows.schema, name, for_commit=False),
        num_buckets=None if rules else default,
    )
    return props, rules


def _check_bucket_count(count: int) -> None:
    if not 1 <= count <= MAX_BUCKETS:
        raise InvalidBucketCountError(
            f"bucket count {count} (--default) is outside 1..{MAX_BUCKETS}",
            hint="pass the table's bucket count",
        )


def _layout(ctx: TableContext, options: WriteOptions) -> _Layout:
    """The table's bucket counts (its rules in force; else its one count) and live bucket file groups.

    Refuses a table that is not bucket-indexed, or whose file groups do not fit their partition's count,
    in any partition: a plain table's count must be the one it records, and above every bucket id.
    """
    live = load_file_groups(ctx.storage, ctx.table)
    for partition, groups in live.items():  # first: is the table bucket-indexed at all?
        for group in groups:
            if not is_bucket_file_id(group.file_id):
                raise NotBucketIndexedError(
                    f"partition {partition or '(table)'} holds file group {group.file_id}, "
                    "which is not a bucket file group",
                    hint="lay the table out in buckets first (`apply --convert`), then write",
                )
    in_force = config_store.load_in_force(ctx.storage, ctx.table.timeline.pending_replace_timestamps())
    if in_force is not None:
        rules = in_force.to_rules()
    else:
        rules = BucketRules((), _plain_bucket_count(ctx.table.config, options.default_buckets))
    existing: dict[tuple[str, int], FileGroup] = {}
    for partition, groups in live.items():
        count = rules.buckets_for(partition, ctx.matcher) if groups else 0
        where = f"partition {partition or '(table)'}"
        for group in groups:
            bucket = bucket_id_from_file_id(group.file_id)
            if bucket >= count:
                raise NotBucketIndexedError(
                    f"{where} holds bucket {bucket} (file group {group.file_id}), but has {count} buckets",
                    hint=f"pass the table's bucket count (--default of a table without rules); else {_REPAIR_HINT}",
                )
            if (partition, bucket) in existing:
                raise NotBucketIndexedError(
                    f"{where} holds two file groups for bucket {bucket}", hint=_REPAIR_HINT
                )
            existing[(partition, bucket)] = group
    return _Layout(rules, existing)


def _plain_bucket_count(config: TableConfig, given: int | None) -> int:
    """The bucket count of a table without rules: the one it records, or ``given``, which must agree."""
    recorded = recorded_num_buckets(config)
    if given is None:
        if recorded is None:
            raise TableMismatchError(
                "the table records no bucket count and none was given",
                hint="pass --default N, N being the bucket count its writers use (hoodie.bucket.index.num.buckets)",
            )
        return recorded
    _check_bucket_count(given)
    if recorded is not None and recorded != given:
        raise TableMismatchError(
            f"the table's bucket index has {recorded} buckets (hoodie.bucket.index.num.buckets), not {given}",
            hint=f"pass --default {recorded}; to change the bucket count, rescale the table with `apply`",
        )
    return given


def _commit(
    ctx: TableContext,
    rows: Any,
    columns: tuple[str, ...],
    layout: _Layout,
    options: WriteOptions,
    stored: TableFiles | None,
    *,
    created: bool = False,
) -> WriteResult:
    """``stored``: how to read the table's live base files (None when there are none)."""
    from pyspark.sql import functions as F  # noqa: N812

    storage, table = ctx.storage, ctx.table
    # Each partition, and how many of its keys must be split (none: the JVM computes every bucket id).
    partitions = rows.groupBy(PARTITION_PATH).agg(F.count_if(~_taken_whole(ctx))).collect()
    incoming_partitions = [r[0] for r in partitions]
    incoming_whole = not any(r[1] for r in partitions)
    buckets = {p: layout.rules.buckets_for(p, ctx.matcher) for p in incoming_partitions}
    with_bucket = rows.withColumn("__hbo_b", _bucket(ctx, buckets, every_key_whole=incoming_whole))
    touched = {(r[0], r[1]) for r in with_bucket.select(PARTITION_PATH, "__hbo_b").distinct().collect()}
    rewritten = {k: g for k, g in layout.groups.items() if k in touched}
    merged, stored_whole = _merge(
        ctx, rows.select(*columns, *KEY_COLUMNS), stored, rewritten, buckets, columns, options
    )

    store = timeline_store(storage, table)
    operation = UPSERT if options.is_upsert else INSERT
    with our_instant(ctx, Action.COMMIT, tuple(incoming_partitions)) as requested:
        instant = requested.timestamp
        inflight = store.start(requested, CommitMetadata(operation, dict.fromkeys(incoming_partitions, ())))
        for partition in incoming_partitions:
            write_partition_metadata(
                storage, partition, instant, partition.count("/") + 1 if partition else 0
            )
        stats = write_bucket_files(
            ctx,
            merged,
            instant=instant,
            buckets=buckets,
            data_columns=columns,
            existing={
                k: ExistingGroup(g.file_id, base.instant)
                for k, g in rewritten.items()
                if (base := g.latest_base_file) is not None  # every live group of a copy-on-write table
            },
            every_key_whole=incoming_whole and stored_whole,
            like=next((g.latest_base_file.path for g in layout.groups.values() if g.latest_base_file), None),
        )
        by_partition: dict[str, tuple[WriteStat, ...]] = dict.fromkeys(incoming_partitions, ())
        for stat in stats:
            by_partition[stat.partition_path] += (stat,)
        schema = to_avro_json(merged.select(*columns).schema, table.name, for_commit=True)
        refuse_if_taken_away(ctx, instant)
        store.complete(inflight, CommitMetadata(operation, by_partition, extra_metadata={"schema": schema}))
    return WriteResult(
        instant, created, len(stats), sum(s.num_writes for s in stats), len(incoming_partitions)
    )


def _bucket(ctx: TableContext, buckets: dict[str, int], *, every_key_whole: bool = False) -> Any:
    """Each row's bucket id under its partition's bucket count."""
    from pyspark.sql import functions as F  # noqa: N812

    counts = num_buckets_column(F.col(PARTITION_PATH), buckets, 1)
    return bucket_id_column(
        F.col(RECORD_KEY), counts, ctx.hash_fields, ctx.key_style, every_key_whole=every_key_whole
    )


def _taken_whole(ctx: TableContext) -> Any:
    from pyspark.sql import functions as F  # noqa: N812

    return key_taken_whole(F.col(RECORD_KEY), ctx.key_style)


def _merge(
    ctx: TableContext,
    incoming: Any,
    stored: TableFiles | None,
    rewritten: dict[tuple[str, int], FileGroup],
    buckets: dict[str, int],
    columns: tuple[str, ...],
    options: WriteOptions,
) -> tuple[Any, bool]:
    """Incoming records plus the old records of every file group they land in (copy-on-write), and
    whether every old record's key is taken whole. An upsert keeps one record per key, by the table's
    merge mode: under EVENT_TIME_ORDERING an old record stays when its ordering value is greater (a null
    is less than any value; a tie goes to the incoming record), under COMMIT_TIME_ORDERING the incoming
    record always wins."""
    from pyspark.sql import functions as F  # noqa: N812

    if not rewritten or stored is None:
        return incoming, True
    old = stored.read([g.latest_base_file for g in rewritten.values() if g.latest_base_file])
    stored_whole = _refuse_misplaced(ctx, old, buckets)
    old = old.select(*columns, *KEY_COLUMNS)
    if not options.is_upsert:
        return old.unionByName(incoming), stored_whole
    config = ctx.table.config
    ordering = config.ordering_fields if merge_mode(config) == EVENT_TIME_ORDERING else ()
    if ordering:
        value = F.col(ordering[0]) if len(ordering) == 1 else F.struct(*ordering)
        kept, new = F.col("__hbo_stored"), F.col("__hbo_incoming")
        wins = kept.isNotNull() & (new.isNull() | (kept > new))
    else:
        value, wins = F.lit(None), F.lit(False)
    pairs = old.select(*KEY_COLUMNS, value.alias("__hbo_stored")).join(
        incoming.select(*KEY_COLUMNS, value.alias("__hbo_incoming")), KEY_COLUMNS
    )
    old = old.join(pairs.filter(~wins).select(*KEY_COLUMNS), KEY_COLUMNS, "left_anti")
    incoming = incoming.join(pairs.filter(wins).select(*KEY_COLUMNS), KEY_COLUMNS, "left_anti")
    return old.unionByName(incoming), stored_whole


def _refuse_misplaced(ctx: TableContext, old: Any, buckets: dict[str, int]) -> bool:
    """Every old record of a rewritten file group must hash to that group's bucket under the counts we
    write with; otherwise the count is not the table's (or its layout is broken), and the rewrite would
    put records in file groups beside those that still hold their old copies. Returns whether every old
    record's key is taken whole (the same pass tells)."""
    from pyspark.sql import functions as F  # noqa: N812

    name = F.col(FILE_NAME)
    bucket = F.col("__hbo_bucket")
    misplaced = bucket != F.substring(name, 1, BUCKET_ID_DIGITS).cast("int")
    first = F.struct(PARTITION_PATH, RECORD_KEY, name.alias("file"), bucket)
    found = (
        old.withColumn("__hbo_bucket", _bucket(ctx, buckets))
        .agg(F.count_if(~_taken_whole(ctx)), F.min(F.when(misplaced, first)))
        .first()
    )
    split_keys, stray = found
    if stray is not None:
        partition, key, file, bucket_id = stray
        raise NotBucketIndexedError(
            f"partition {partition or '(table)'}: record {key} of {file} hashes to bucket {bucket_id}, "
            "not to that file's",
            hint=f"pass the table's bucket count (--default of a table without rules); else {_REPAIR_HINT}",
        )
    return int(split_keys) == 0
