"""`write`: insert or upsert a dataset into a bucket-indexed COW table, laid out by the rules in force.

With ``create`` it makes the table first (table version 8 or 9, no metadata table, an initial
hashing_config when rules are given, else the bucket count recorded in ``hoodie.properties``): that is
also how an existing plain Parquet dataset is onboarded (bootstrap, RFC-12's full-record mode). Every
refusal comes before anything is written, and before a new table is created: a table whose layout is
not a bucket layout of its counts (any partition), a bucket count other than the table's, a dataset
whose columns or column types differ from the table's (nullability aside; no cast is made), records
without a key, an ordering field other than the table's.

Records get Hudi's record key and partition path; each bucket a record lands in is rewritten as one new
base file of its file group (copy-on-write), holding the group's old records too. An upsert merges by
the table's merge mode: under EVENT_TIME_ORDERING a stored record with a greater ordering value stays
(ties go to the incoming one), under COMMIT_TIME_ORDERING the incoming record wins. One commit instant,
rolled back on any failure.
"""

from __future__ import annotations

import json
import operator
from dataclasses import dataclass
from functools import reduce
from typing import Any

from hudi_bucket.core.buckets import BUCKET_ID_DIGITS, bucket_id_from_file_id, is_bucket_file_id
from hudi_bucket.core.commits import INSERT, UPSERT, CommitMetadata
from hudi_bucket.core.filegroups import FileGroup
from hudi_bucket.core.metafields import META_COLUMNS, PARTITION_PATH, RECORD_KEY
from hudi_bucket.core.properties import Properties, TableConfig
from hudi_bucket.core.recordkeys import EMPTY_PLACEHOLDER, NULL_PLACEHOLDER
from hudi_bucket.core.rules import MAX_BUCKETS, BucketRules
from hudi_bucket.core.timeline import Action
from hudi_bucket.errors import (
    HudiBucketError,
    InvalidBucketCountError,
    NotAHudiTableError,
    NotBucketIndexedError,
    TableMismatchError,
    UnsupportedTableError,
)
from hudi_bucket.hudi import config_store
from hudi_bucket.hudi.rollback import rollback
from hudi_bucket.hudi.table import latest_table_schema, load_file_groups, timeline_store
from hudi_bucket.hudi.table_creation import (
    CUSTOM,
    EVENT_TIME_ORDERING,
    create_table,
    merge_mode,
    new_table_properties,
    recorded_num_buckets,
    write_partition_metadata,
)
from hudi_bucket.jobs.avro_schema import to_avro_json, to_avro_schema
from hudi_bucket.jobs.bucket_files import ExistingGroup, write_bucket_files
from hudi_bucket.jobs.bucketing import bucket_id_column, num_buckets_column
from hudi_bucket.jobs.context import TableContext
from hudi_bucket.jobs.java_regex import JavaRegexMatcher
from hudi_bucket.jobs.preconditions import check_table, roll_back_our_leftovers
from hudi_bucket.jobs.spark_paths import table_file_uris
from hudi_bucket.storage import storage_for

NEW_TABLE_BUCKETS = 4  # a new table's bucket count when none is given
DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"  # Hudi's path for a null or empty partition value
_KEYS = [PARTITION_PATH, RECORD_KEY]
_REPAIR_HINT = "run `verify`, then `apply` the rules to repair the layout before writing"


class SourceSchemaError(HudiBucketError):
    """The dataset's columns do not match the table's."""

    hint = "select the table's columns (same names) from the dataset; schema evolution is not supported here"


@dataclass(frozen=True)
class WriteRequest:
    source: str
    format: str = "parquet"
    operation: str = "upsert"
    record_key: tuple[str, ...] = ()
    partition_fields: tuple[str, ...] = ()
    ordering_field: str = ""
    create: bool = False
    table_name: str | None = None
    table_version: int = 9
    hive_style: bool = False
    expressions: str = ""
    default_buckets: int | None = None  # None: the table's own (NEW_TABLE_BUCKETS for a new table)

    @property
    def is_upsert(self) -> bool:
        return self.operation == "upsert"


@dataclass(frozen=True)
class WriteResult:
    instant: str
    created: bool
    files_written: int
    rows_written: int
    partitions: int

    def to_dict(self) -> dict[str, Any]:
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


def read_source(spark: Any, request: WriteRequest) -> Any:
    reader = spark.read.format(request.format)
    if request.format == "csv":
        reader = reader.option("header", "true").option("inferSchema", "true")
    return reader.load(request.source)


def write(spark: Any, uri: str, request: WriteRequest, *, rows: Any = None) -> WriteResult:
    """Write ``rows`` (a DataFrame; read from ``request.source`` when None) into the table at ``uri``."""
    rows = read_source(spark, request) if rows is None else rows
    rows = rows.drop(*[c for c in rows.columns if c in META_COLUMNS])
    try:
        ctx = TableContext.open(spark, uri)
    except NotAHudiTableError:
        if not request.create:
            raise
        return _create_and_write(spark, uri, request, rows)
    ctx, _ = roll_back_our_leftovers(ctx)
    check_table(ctx)
    layout = _layout(ctx, request)
    columns = _table_columns(ctx, layout, rows)
    keyed = _keyed(rows.select(*columns), ctx.table.config, request)
    return _commit(ctx, keyed, columns, layout, request, created=False)


def _create_and_write(spark: Any, uri: str, request: WriteRequest, rows: Any) -> WriteResult:
    """Create the table, then write its first commit; every check comes before the table exists."""
    props, rules = _new_table(spark, uri, request, rows)
    keyed = _keyed(rows, TableConfig(props), request)
    storage = storage_for(uri, spark)
    create_table(storage, props)
    if rules:
        config_store.create_initial_config(storage, rules)
    ctx = TableContext.open(spark, uri)
    return _commit(ctx, keyed, tuple(rows.columns), _layout(ctx, request), request, created=True)


def _new_table(
    spark: Any, uri: str, request: WriteRequest, rows: Any
) -> tuple[Properties, BucketRules | None]:
    """The properties and rules (None: a plain bucket index) of the table to create, all checked."""
    name = request.table_name or uri.rstrip("/").rsplit("/", 1)[-1]
    fields = (*request.record_key, *request.partition_fields, *filter(None, (request.ordering_field,)))
    missing = [f for f in fields if f not in rows.columns]
    if not request.record_key or missing:
        raise SourceSchemaError(
            f"record key / partition / ordering fields {missing or '(none given)'} not in the dataset"
        )
    default = request.default_buckets or NEW_TABLE_BUCKETS
    rules = BucketRules.parse(request.expressions, default) if request.expressions else None
    if rules:
        rules.validate(JavaRegexMatcher(spark._jvm))
    else:
        _check_bucket_count(default)
    props = new_table_properties(
        table_name=name,
        table_version=request.table_version,
        record_key_fields=request.record_key,
        partition_fields=request.partition_fields,
        hive_style=request.hive_style,
        ordering_fields=(request.ordering_field,) if request.ordering_field else (),
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


def _layout(ctx: TableContext, request: WriteRequest) -> _Layout:
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
        rules = BucketRules((), _plain_bucket_count(ctx.table.config, request.default_buckets))
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


def _table_columns(ctx: TableContext, layout: _Layout, rows: Any) -> tuple[str, ...]:
    """The table's data columns, in its order. The dataset must have the same columns of the same types
    (nullability aside), as a live base file has them; in a table without one yet, as its recorded Avro
    schema has them (where Spark's byte, short and int are all Avro ``int``)."""
    sample = next((g.latest_base_file for g in layout.groups.values() if g.latest_base_file), None)
    if sample is not None:
        schema = ctx.spark.read.parquet(*table_file_uris(ctx.storage, [sample.path])).schema
        table = {f.name: f.dataType.simpleString() for f in schema.fields if f.name not in META_COLUMNS}
        incoming = {f.name: f.dataType.simpleString() for f in rows.schema.fields}
    else:
        recorded = latest_table_schema(ctx.storage, ctx.table)
        if recorded is None:
            return tuple(rows.columns)
        table = _avro_types(json.loads(recorded))
        incoming = _avro_types(to_avro_schema(rows.schema, ctx.table.name, for_commit=False))
    if table.keys() != incoming.keys():
        raise SourceSchemaError(
            f"the dataset's columns differ from the table's: missing {sorted(table.keys() - incoming.keys())}, "
            f"extra {sorted(incoming.keys() - table.keys())}"
        )
    differing = [f"{c} is {incoming[c]}, not {t}" for c, t in table.items() if incoming[c] != t]
    if differing:
        raise SourceSchemaError(
            f"the dataset's column types differ from the table's: {'; '.join(differing)}",
            hint="cast those columns to the table's types; type changes are not supported here",
        )
    return tuple(table)


def _avro_types(schema: dict[str, Any]) -> dict[str, str]:
    """Each data field's Avro type, nullability taken out, as text."""
    types = {f["name"]: _without_nulls(f["type"]) for f in schema["fields"] if f["name"] not in META_COLUMNS}
    return {name: t if isinstance(t, str) else json.dumps(t, sort_keys=True) for name, t in types.items()}


def _without_nulls(avro: Any) -> Any:
    """An Avro type without its ``null`` union branches and field defaults, at every depth."""
    if isinstance(avro, list):
        kept = [_without_nulls(t) for t in avro if t != "null"]
        return kept[0] if len(kept) == 1 else kept
    if isinstance(avro, dict):
        return {
            k: [_without_nulls(f) for f in v] if k == "fields" else _without_nulls(v)
            for k, v in avro.items()
            if k != "default"
        }
    return avro


def _keyed(rows: Any, config: TableConfig, request: WriteRequest) -> Any:
    """The dataset with Hudi's record key and partition path, one record per key where Hudi combines
    duplicates first (the greatest ordering value wins)."""
    if request.ordering_field and (request.ordering_field,) != config.ordering_fields:
        raise TableMismatchError(
            f"--ordering-field {request.ordering_field}: the table orders records by "
            f"{list(config.ordering_fields) or 'commit time only'}",
            hint="leave --ordering-field out, or pass the table's own",
        )
    if request.is_upsert and merge_mode(config) == CUSTOM:
        raise UnsupportedTableError(
            "the table merges records with a custom payload class or merger, which we cannot run",
            hint="upsert with Hudi's own writer, or insert",
        )
    _refuse_keyless(rows, config.record_key_fields)
    keyed = _with_keys(rows, config)
    if request.is_upsert or request.ordering_field:
        keyed = _deduplicate(keyed, config.ordering_fields)
    return keyed


def _refuse_keyless(rows: Any, keys: tuple[str, ...]) -> None:
    """Hudi's key generators refuse a record whose key fields are all null or empty."""
    from pyspark.sql import functions as F  # noqa: N812

    blank = reduce(operator.and_, (F.coalesce(F.col(k).cast("string"), F.lit("")) == "" for k in keys))
    if rows.filter(blank).limit(1).count():
        raise SourceSchemaError(
            f"the dataset has records whose record key ({', '.join(keys)}) is null or empty",
            hint="drop or fix those records: Hudi writes no record without a key",
        )


def _with_keys(rows: Any, config: TableConfig) -> Any:
    """Hudi's record key and partition path for each row, as its key generators build them."""
    from pyspark.sql import functions as F  # noqa: N812

    def text(field: str) -> Any:
        return F.col(field).cast("string")

    keys = config.record_key_fields
    if len(keys) == 1 and config.key_generator_type != "COMPLEX":
        key = text(keys[0])
    else:
        key = F.concat_ws(
            ",",
            *(
                F.concat(
                    F.lit(f"{k}:"),
                    F.when(text(k).isNull(), NULL_PLACEHOLDER)
                    .when(text(k) == "", EMPTY_PLACEHOLDER)
                    .otherwise(text(k)),
                )
                for k in keys
            ),
        )
    segments = [
        F.concat(
            F.lit(f"{p}=" if config.hive_style_partitioning else ""),
            F.when(text(p).isNull() | (text(p) == ""), DEFAULT_PARTITION).otherwise(text(p)),
        )
        for p in config.partition_fields
    ]
    path = F.concat_ws("/", *segments) if segments else F.lit("")
    return rows.withColumn(RECORD_KEY, key).withColumn(PARTITION_PATH, path)


def _deduplicate(rows: Any, ordering_fields: tuple[str, ...]) -> Any:
    """One record per key: the one with the greatest ordering values (any one without ordering fields)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F  # noqa: N812

    if not ordering_fields:
        return rows.dropDuplicates(_KEYS)
    window = Window.partitionBy(*_KEYS).orderBy(*(F.col(f).desc_nulls_last() for f in ordering_fields))
    return (
        rows.withColumn("__hbo_rank", F.row_number().over(window)).filter("__hbo_rank = 1").drop("__hbo_rank")
    )


def _commit(
    ctx: TableContext,
    rows: Any,
    columns: tuple[str, ...],
    layout: _Layout,
    request: WriteRequest,
    created: bool,
) -> WriteResult:
    storage, table, spark = ctx.storage, ctx.table, ctx.spark
    incoming_partitions = [r[0] for r in rows.select(PARTITION_PATH).distinct().collect()]
    buckets = {p: layout.rules.buckets_for(p, ctx.matcher) for p in incoming_partitions}
    with_bucket = rows.withColumn("__hbo_b", _bucket(ctx, buckets))
    touched = {(r[0], r[1]) for r in with_bucket.select(PARTITION_PATH, "__hbo_b").distinct().collect()}
    rewritten = {k: g for k, g in layout.groups.items() if k in touched}
    merged = _merge(ctx, rows.select(*columns, *_KEYS), rewritten, buckets, columns, request)

    store = timeline_store(storage, table)
    instant = store.new_instant_time()
    operation = UPSERT if request.is_upsert else INSERT
    requested = store.request(instant, Action.COMMIT)
    try:
        inflight = store.start(requested, CommitMetadata(operation, dict.fromkeys(incoming_partitions, ())))
        for partition in incoming_partitions:
            write_partition_metadata(
                storage, partition, instant, partition.count("/") + 1 if partition else 0
            )
        stats = write_bucket_files(
            spark,
            storage,
            merged,
            instant=instant,
            buckets=buckets,
            hash_fields=ctx.hash_fields,
            key_style=ctx.key_style,
            data_columns=columns,
            existing={k: ExistingGroup(g.file_id, g.latest_base_file.instant) for k, g in rewritten.items()},
        )
        by_partition: dict[str, tuple] = dict.fromkeys(incoming_partitions, ())
        for stat in stats:
            by_partition[stat.partition_path] += (stat,)
        schema = to_avro_json(merged.select(*columns).schema, table.name, for_commit=True)
        store.complete(inflight, CommitMetadata(operation, by_partition, extra_metadata={"schema": schema}))
    except BaseException:
        rollback(storage, ctx.reload().table, instant)
        raise
    return WriteResult(
        instant, created, len(stats), sum(s.num_writes for s in stats), len(incoming_partitions)
    )


def _bucket(ctx: TableContext, buckets: dict[str, int]) -> Any:
    """Each row's bucket id under its partition's bucket count."""
    from pyspark.sql import functions as F  # noqa: N812

    counts = num_buckets_column(F.col(PARTITION_PATH), buckets, 1)
    return bucket_id_column(F.col(RECORD_KEY), counts, ctx.hash_fields, ctx.key_style)


def _merge(
    ctx: TableContext,
    incoming: Any,
    rewritten: dict[tuple[str, int], FileGroup],
    buckets: dict[str, int],
    columns: tuple[str, ...],
    request: WriteRequest,
) -> Any:
    """Incoming records plus the old records of every file group they land in (copy-on-write). An
    upsert keeps one record per key, by the table's merge mode: under EVENT_TIME_ORDERING an old record
    stays when its ordering value is greater (a null is less than any value; a tie goes to the incoming
    record), under COMMIT_TIME_ORDERING the incoming record always wins."""
    from pyspark.sql import functions as F  # noqa: N812

    if not rewritten:
        return incoming
    paths = table_file_uris(ctx.storage, [g.latest_base_file.path for g in rewritten.values()])
    old = ctx.spark.read.parquet(*paths).withColumn("__hbo_file", F.col("_metadata.file_name"))
    _refuse_misplaced(ctx, old, buckets)
    old = old.select(*columns, *_KEYS)
    if not request.is_upsert:
        return old.unionByName(incoming)
    config = ctx.table.config
    ordering = config.ordering_fields if merge_mode(config) == EVENT_TIME_ORDERING else ()
    if ordering:
        value = F.col(ordering[0]) if len(ordering) == 1 else F.struct(*ordering)
        stored, new = F.col("__hbo_stored"), F.col("__hbo_incoming")
        wins = stored.isNotNull() & (new.isNull() | (stored > new))
    else:
        value, wins = F.lit(None), F.lit(False)
    pairs = old.select(*_KEYS, value.alias("__hbo_stored")).join(
        incoming.select(*_KEYS, value.alias("__hbo_incoming")), _KEYS
    )
    old = old.join(pairs.filter(~wins).select(*_KEYS), _KEYS, "left_anti")
    incoming = incoming.join(pairs.filter(wins).select(*_KEYS), _KEYS, "left_anti")
    return old.unionByName(incoming)


def _refuse_misplaced(ctx: TableContext, old: Any, buckets: dict[str, int]) -> None:
    """Every old record of a rewritten file group must hash to that group's bucket under the counts we
    write with; otherwise the count is not the table's (or its layout is broken), and the rewrite would
    put records in file groups beside those that still hold their old copies."""
    from pyspark.sql import functions as F  # noqa: N812

    name = F.col("__hbo_file")
    stray = (
        old.withColumn("__hbo_bucket", _bucket(ctx, buckets))
        .filter(F.col("__hbo_bucket") != F.substring(name, 1, BUCKET_ID_DIGITS).cast("int"))
        .select(PARTITION_PATH, RECORD_KEY, name.alias("file"), "__hbo_bucket")
        .limit(1)
        .collect()
    )
    if stray:
        partition, key, file, bucket = stray[0]
        raise NotBucketIndexedError(
            f"partition {partition or '(table)'}: record {key} of {file} hashes to bucket {bucket}, "
            "not to that file's",
            hint=f"pass the table's bucket count (--default of a table without rules); else {_REPAIR_HINT}",
        )
