"""Tables we create are the tables Hudi 1.x creates: our model and hudi-rs read them, and their data."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hudi import HudiTableBuilder
from pyspark.sql.types import LongType, StringType, StructField, StructType

from hudi_bucket.core.commits import INSERT, CommitMetadata, WriteStat
from hudi_bucket.core.filegroups import PARTITION_METAFILE
from hudi_bucket.core.metafields import META_COLUMNS
from hudi_bucket.core.properties import Properties, TableConfig, parse_properties
from hudi_bucket.core.timeline import Action, TimelineLayout
from hudi_bucket.errors import CorruptTableError, HudiBucketError, StorageError
from hudi_bucket.hudi.fs_view import list_partitions, load_file_groups
from hudi_bucket.hudi.table import latest_table_schema, load_table, timeline_store
from hudi_bucket.hudi.table_creation import (
    NUM_BUCKETS,
    create_table,
    key_generator_type,
    merge_mode,
    new_table_properties,
    recorded_num_buckets,
    write_partition_metadata,
)
from hudi_bucket.hudi.table_properties import (
    BACKUP_FILE,
    PROPERTIES_FILE,
    read_table_properties,
    write_table_properties,
)
from hudi_bucket.spark.avro_schema import to_avro_json
from hudi_bucket.storage import LocalStorage, walk

SCHEMA = StructType(
    [
        StructField("id", StringType()),
        StructField("name", StringType()),
        StructField("ts", LongType()),
        StructField("region", StringType()),
    ]
)
ROWS = {
    "id": ["a1", "a2", "b1"],
    "name": ["ann", "bob", "cid"],
    "ts": [3, 1, 2],
    "region": ["eu", "eu", "us"],
}
JAVA_DATE = re.compile(r"#\w{3} \w{3} \d\d \d\d:\d\d:\d\d UTC \d{4}")  # Date.toString, as Java stores it
# Keys we write that Hudi's Spark writer leaves to their defaults, and keys only a metadata table
# (index definitions, metadata partitions) puts there.
OURS_ONLY = {"hoodie.table.base.file.format"}
METADATA_TABLE_KEYS = {
    "hoodie.table.index.defs.path",
    "hoodie.table.metadata.partitions",
    "hoodie.table.metadata.partitions.inflight",
}


def properties(
    version: int, partition_fields: tuple[str, ...], *, hive_style: bool = True, name: str = "trips"
) -> Properties:
    return new_table_properties(
        table_name=name,
        table_version=version,
        record_key_fields=("id",),
        partition_fields=partition_fields,
        hive_style=hive_style,
        ordering_fields=("ts",),
        create_schema=to_avro_json(SCHEMA, name, for_commit=False),
        database_name="default",
    )


@pytest.mark.parametrize(
    "name",
    [
        "cow_v8_complexkeygen_hivestyle",
        "cow_v8_empty",
        "cow_v8_nonpartitioned",
        "cow_v8_simplekeygen_nonhivestyle",
        "cow_v9_txns_nonpart_meta",
        "cow_v9_txns_simple_meta",
        "cow_v9_txns_simple_overwrite",
    ],
)
def test_properties_are_those_hudi_wrote(fixture_table, name: str) -> None:
    theirs = read_table_properties(LocalStorage(fixture_table(name)))
    config = TableConfig(theirs)
    ours = new_table_properties(
        table_name=config.table_name,
        table_version=config.table_version,
        record_key_fields=config.record_key_fields,
        partition_fields=config.partition_fields,
        hive_style=config.hive_style_partitioning,
        ordering_fields=config.ordering_fields,
        create_schema=config.create_schema or "",
        database_name=config.database_name,
    )
    assert {k: v for k, v in ours.items() if k not in OURS_ONLY | METADATA_TABLE_KEYS} == {
        k: v for k, v in theirs.items() if k not in METADATA_TABLE_KEYS
    }
    assert ours["hoodie.table.base.file.format"] == "PARQUET"
    assert ours["hoodie.table.metadata.partitions"] == ours["hoodie.table.metadata.partitions.inflight"] == ""


def test_the_file_reads_like_hudis() -> None:
    props = properties(9, ("region",))
    saved_on, date = props.header
    assert re.fullmatch(r"#Properties saved on \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", saved_on)
    assert JAVA_DATE.fullmatch(date)
    text = props.render().decode()
    assert parse_properties(text) == props
    assert list(props)[-1] == "hoodie.table.checksum"
    assert 'hoodie.table.create.schema={"type"\\:"record"' in text  # Java escapes ':' in values


@pytest.mark.parametrize(
    ("record_keys", "partitions", "expected"),
    [
        (("id",), (), "NON_PARTITION"),
        (("id", "name"), (), "NON_PARTITION"),
        (("id",), ("region",), "SIMPLE"),
        (("id", "name"), ("region",), "COMPLEX"),
        (("id",), ("year", "month"), "COMPLEX"),
    ],
)
def test_key_generator_type_follows_the_number_of_fields(
    record_keys: tuple[str, ...], partitions: tuple[str, ...], expected: str
) -> None:
    assert key_generator_type(record_keys, partitions) == expected


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"table_version": 6}, "version 8 or 9"),
        ({"record_key_fields": ()}, "record key"),
        ({"partition_fields": ("a,b",)}, "comma"),
        ({"create_schema": "[]"}, "Avro record"),
        ({"num_buckets": 0}, "bucket count 0"),
    ],
)
def test_what_hudi_would_misread_is_refused(change: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {
        "table_name": "t",
        "table_version": 9,
        "record_key_fields": ("id",),
        "partition_fields": (),
        "hive_style": False,
        "create_schema": to_avro_json(SCHEMA, "t", for_commit=False),
    } | change
    with pytest.raises(HudiBucketError, match=message):
        new_table_properties(**arguments)  # type: ignore[arg-type]


def test_a_plain_bucket_count_is_recorded_and_read_back() -> None:
    assert recorded_num_buckets(TableConfig(properties(9, ("region",)))) is None
    arguments = {
        "table_name": "t",
        "table_version": 9,
        "record_key_fields": ("id",),
        "partition_fields": (),
        "hive_style": False,
        "create_schema": to_avro_json(SCHEMA, "t", for_commit=False),
    }
    props = new_table_properties(**arguments, num_buckets=3)  # type: ignore[arg-type]
    assert props[NUM_BUCKETS] == "3"
    assert recorded_num_buckets(TableConfig(parse_properties(props.render()))) == 3
    with pytest.raises(CorruptTableError, match=f"{NUM_BUCKETS}=three"):
        recorded_num_buckets(TableConfig(props.set(NUM_BUCKETS, "three")))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("cow_v6_simplekeygen_nonhivestyle", "EVENT_TIME_ORDERING"),  # no mode, no payload: an ordering field
        ("cow_v8_empty", "COMMIT_TIME_ORDERING"),
        ("cow_v8_simplekeygen_nonhivestyle", "EVENT_TIME_ORDERING"),
    ],
)
def test_the_merge_mode_is_read_as_hudi_infers_it(fixture_table, name: str, expected: str) -> None:
    config = TableConfig(read_table_properties(LocalStorage(fixture_table(name))))
    assert merge_mode(config) == expected
    inferred = config.props.remove("hoodie.record.merge.mode")
    assert merge_mode(TableConfig(inferred)) == expected  # from the payload class or ordering fields
    custom = inferred.set("hoodie.compaction.payload.class", "com.example.MyPayload")
    assert merge_mode(TableConfig(custom)) == "CUSTOM"


@pytest.mark.parametrize("version", [8, 9])
def test_a_created_table_loads_with_our_model(tmp_path: Path, version: int) -> None:
    storage = LocalStorage(tmp_path)
    table = create_table(storage, properties(version, ("region",)))

    assert table.version == version
    assert table.layout is TimelineLayout.V2
    assert table.timeline_folder == ".hoodie/timeline"
    assert table.timeline.instants == ()
    assert not table.metadata_table_live
    assert not table.metadata_table_exists
    assert table.config.record_key_fields == ("id",)
    assert table.config.partition_fields == ("region",)
    assert table.config.ordering_fields == ("ts",)
    assert table.config.key_generator_type == "SIMPLE"
    assert latest_table_schema(storage, table) == to_avro_json(SCHEMA, "trips", for_commit=False)
    for folder in (
        ".hoodie/.schema",
        ".hoodie/timeline/history",
        ".hoodie/.temp",
        ".hoodie/.aux/.bootstrap/.partitions",
        ".hoodie/.aux/.bootstrap/.fileids",
    ):
        assert (tmp_path / folder).is_dir(), folder
    assert [f.path for f in walk(storage)] == [PROPERTIES_FILE]  # empty folders, no leftover markers


@pytest.mark.parametrize("version", [8, 9])
def test_hudi_rs_opens_an_empty_created_table(tmp_path: Path, version: int) -> None:
    create_table(LocalStorage(tmp_path), properties(version, ()))
    table = HudiTableBuilder.from_base_uri(str(tmp_path)).build()
    assert table.get_file_slices() == []
    assert sum(batch.num_rows for batch in table.read()) == 0


def write_base_file(root: Path, partition: str, rows: pa.Table, instant: str) -> WriteStat:
    """One base file with Hudi's meta columns first, as a Hudi writer lays it out."""
    file_id = f"{uuid.uuid4()}-0"
    file_name = f"{file_id}_0-1-0_{instant}.parquet"
    n = rows.num_rows
    meta = {
        "_hoodie_commit_time": [instant] * n,
        "_hoodie_commit_seqno": [f"{instant}_0_{i}" for i in range(n)],
        "_hoodie_record_key": rows.column("id").to_pylist(),
        "_hoodie_partition_path": [partition] * n,
        "_hoodie_file_name": [file_name] * n,
    }
    table = pa.table({**meta, **{c: rows.column(c) for c in rows.column_names}})
    path = f"{partition}/{file_name}" if partition else file_name
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, root / path)
    size = (root / path).stat().st_size
    return WriteStat(partition, file_id, path, n, n, size, size)


def commit_rows(root: Path, partition_of: dict[str, str]) -> str:
    """Our first commit: each region's rows in one base file of its partition, through the timeline."""
    storage = LocalStorage(root)
    table = load_table(storage)
    store = timeline_store(storage, table)
    instant = store.new_instant_time()
    rows = pa.table(ROWS)
    partitions = sorted(set(partition_of.values()))
    inflight = store.start(
        store.request(instant, Action.COMMIT), CommitMetadata(INSERT, dict.fromkeys(partitions, ()))
    )
    stats: dict[str, tuple[WriteStat, ...]] = {}
    for partition in partitions:
        regions = [r for r, p in partition_of.items() if p == partition]
        chosen = rows.filter(pc.is_in(rows.column("region"), value_set=pa.array(regions)))
        depth = len(partition.split("/")) if partition else 0
        write_partition_metadata(storage, partition, instant, depth)
        stats[partition] = (write_base_file(root, partition, chosen, instant),)
    schema = to_avro_json(SCHEMA, table.name, for_commit=True)
    store.complete(inflight, CommitMetadata(INSERT, stats, extra_metadata={"schema": schema}))
    return instant


@pytest.mark.parametrize("version", [8, 9])
@pytest.mark.parametrize(
    ("partition_fields", "hive_style", "partition_of"),
    [
        (("region",), True, {"eu": "region=eu", "us": "region=us"}),
        (("region",), False, {"eu": "eu", "us": "us"}),
        ((), True, {"eu": "", "us": ""}),
    ],
    ids=["hive-style", "plain", "non-partitioned"],
)
def test_hudi_rs_reads_exactly_the_rows_of_our_first_commit(
    tmp_path: Path,
    version: int,
    partition_fields: tuple[str, ...],
    hive_style: bool,
    partition_of: dict[str, str],
) -> None:
    storage = LocalStorage(tmp_path)
    create_table(storage, properties(version, partition_fields, hive_style=hive_style))
    instant = commit_rows(tmp_path, partition_of)

    table = load_table(storage)
    assert table.timeline.latest_completed.timestamp == instant
    assert list_partitions(storage) == tuple(sorted(set(partition_of.values())))
    assert latest_table_schema(storage, table) == to_avro_json(SCHEMA, "trips", for_commit=True)
    ours = {(p, g.file_id) for p, gs in load_file_groups(storage, table).items() for g in gs}

    hudi = HudiTableBuilder.from_base_uri(str(tmp_path)).build()
    assert {(s.partition_path, s.file_id) for s in hudi.get_file_slices()} == ours
    read = pa.Table.from_batches(hudi.read())
    assert read.drop_columns(META_COLUMNS).sort_by("id").to_pydict() == ROWS
    assert set(read.column("_hoodie_commit_time").to_pylist()) == {instant}


def test_creating_over_an_existing_table_is_refused_and_touches_nothing(written_table) -> None:
    root = written_table("cow_v8_nonpartitioned")
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    with pytest.raises(StorageError, match="already holds a Hudi table"):
        create_table(LocalStorage(root), properties(8, ()))
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


def test_a_table_mid_update_counts_as_existing(tmp_path: Path) -> None:
    storage = LocalStorage(tmp_path)
    storage.write(BACKUP_FILE, properties(9, ()).render())  # a crash during a properties update
    with pytest.raises(StorageError, match=r"hoodie\.properties\.backup"):
        create_table(storage, properties(9, ()))
    assert not storage.exists(PROPERTIES_FILE)


def test_a_creation_that_crashed_before_its_properties_can_be_retried(tmp_path: Path) -> None:
    (tmp_path / ".hoodie" / "timeline" / "history").mkdir(parents=True)
    (tmp_path / ".hoodie" / ".schema").mkdir()
    assert create_table(LocalStorage(tmp_path), properties(9, ())).version == 9


def test_partition_metadata_is_hudis_properties_file(tmp_path: Path) -> None:
    storage = LocalStorage(tmp_path)
    assert write_partition_metadata(storage, "year=2025/month=11", "20251121093000123", 2)
    text = storage.read(f"year=2025/month=11/{PARTITION_METAFILE}").decode()
    lines = text.splitlines()
    assert lines[0] == "#partition metadata"
    assert JAVA_DATE.fullmatch(lines[1])
    assert dict(parse_properties(text)) == {"commitTime": "20251121093000123", "partitionDepth": "2"}


def test_partition_metadata_keeps_the_first_one_written(tmp_path: Path) -> None:
    storage = LocalStorage(tmp_path)
    assert write_partition_metadata(storage, "", "20251121093000123", 0)
    first = storage.read(PARTITION_METAFILE)
    assert not write_partition_metadata(storage, "", "20251122000000000", 0)
    assert storage.read(PARTITION_METAFILE) == first


def test_partition_depth_must_match_the_path(tmp_path: Path) -> None:
    # A single partition field whose values hold slashes is as deep as its folders.
    with pytest.raises(ValueError, match="3 folder"):
        write_partition_metadata(LocalStorage(tmp_path), "2025/11/21", "20251121093000123", 1)
    assert not (tmp_path / "2025").exists()


@pytest.mark.parametrize("where", [".hoodie/.index_defs/index.json", "{root}/.hoodie/.index_defs/index.json"])
@pytest.mark.parametrize("partitioned", [True, False])
def test_the_record_indexs_kind_is_read_from_the_index_definitions_hudi_wrote(
    tmp_path: Path, where: str, partitioned: bool
) -> None:
    """Hudi 1.1+ records the path relative to the table; 1.0 wrote it whole."""
    storage = LocalStorage(tmp_path)
    create_table(storage, properties(9, ("region",)))
    definition = {"indexName": "record_index", "indexOptions": {"isPartitioned": str(partitioned).lower()}}
    storage.write(
        ".hoodie/.index_defs/index.json",
        json.dumps({"indexDefinitions": {"record_index": definition}}).encode(),
    )
    indexed = read_table_properties(storage).set("hoodie.table.metadata.partitions", "files,record_index")
    write_table_properties(
        storage, indexed.set("hoodie.table.index.defs.path", where.format(root=tmp_path.as_uri()))
    )

    loaded = load_table(storage)

    assert loaded.record_index_partitioned is partitioned
    assert loaded.metadata_indexes.settings()["hoodie.metadata.record.level.index.enable"] is partitioned
