"""Bucket tables for tests, made by hand from the real fixture tables, and broken on purpose.

``lay_out_in_buckets`` rewrites every partition of a fixture as a bucket-index writer would have laid it
out: one base file per non-empty bucket, named with a bucket file id, meta columns updated, all in one
replacecommit that replaces the old file groups. Buckets are computed with the scalar core functions, so
the Spark code under test is checked against an independent path. The ``break_*`` functions each commit
one more replacecommit that leaves the table readable but wrong in one known way.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_bucket.commands.verify import verify
from hudi_bucket.core import file_format
from hudi_bucket.core.buckets import bucket_id_from_file_id, new_bucket_file_id, record_key_bucket_id
from hudi_bucket.core.commits import INSERT_OVERWRITE, CommitMetadata, WriteStat
from hudi_bucket.core.filegroups import FileGroup, partition_file_path
from hudi_bucket.core.metafields import RECORD_KEY
from hudi_bucket.core.recordkeys import KeyStyle
from hudi_bucket.core.timeline import Action
from hudi_bucket.hudi.fs_view import load_file_groups
from hudi_bucket.hudi.table import disable_metadata_table, latest_table_schema, load_table, timeline_store
from hudi_bucket.hudi.table_properties import read_table_properties, write_table_properties
from hudi_bucket.spark.context import TableContext
from hudi_bucket.storage import LocalStorage

NewFiles = Mapping[str, list[tuple[str, pa.Table]]]
"""Partition -> the (file id, rows) of each base file a replacecommit writes there."""


def verified(ctx: TableContext) -> bool:
    """Whether ``verify`` passes on the table as it is now, under the hashing_config in force (it raises
    LayoutViolationError, with every violation, when it does not)."""
    return verify(ctx.reload()).ok


def live_groups(root: Path) -> dict[str, tuple[FileGroup, ...]]:
    storage = LocalStorage(root)
    return load_file_groups(storage, load_table(storage))


def lay_out_in_buckets(root: Path, buckets: Mapping[str, int]) -> None:
    """Rewrite every non-empty partition into bucket file groups (``buckets``: partition -> count).

    Records are bucketed as Hudi 1.x does, on the table's record-key fields. A live metadata table is
    disabled first, since readers would keep listing the replaced files from it.
    """
    storage = LocalStorage(root)
    table = load_table(storage)
    if table.metadata_table_live:
        table = disable_metadata_table(storage, table)
    fields = table.config.record_key_fields
    groups = {p: g for p, g in load_file_groups(storage, table).items() if g}
    new_files: dict[str, list[tuple[str, pa.Table]]] = {}
    for partition, partition_groups in groups.items():
        rows = _latest_rows(root, partition_groups)
        keys = rows.column(RECORD_KEY).to_pylist()
        bucket_of = pa.array(
            [record_key_bucket_id(k, fields, buckets[partition], KeyStyle.HUDI_1X) for k in keys]
        )
        new_files[partition] = [
            (new_bucket_file_id(b), rows.filter(pc.equal(bucket_of, b)))
            for b in sorted(set(bucket_of.to_pylist()))
        ]
    _replace(root, groups, new_files)


def break_by_moving_a_record(root: Path, partition: str) -> str:
    """Move one record from one bucket file group into another; returns the id of the group that took it."""
    source, target = _largest_groups(root, partition, 2)
    source_rows, target_rows = _latest_rows(root, [source]), _latest_rows(root, [target])
    stranger_id = _same_bucket_id(target.file_id)
    new_files = [(stranger_id, pa.concat_tables([target_rows, source_rows.slice(0, 1)]))]
    if source_rows.num_rows > 1:
        new_files.append((_same_bucket_id(source.file_id), source_rows.slice(1)))
    _replace(root, {partition: (source, target)}, {partition: new_files})
    return stranger_id


def break_by_copying_a_record(root: Path, partition: str, **changes: Any) -> tuple[str, str]:
    """Copy one record into another bucket's file group, with ``changes`` to its columns (a second
    version of the key, in the wrong bucket); returns the id of the group that took it, and the key."""
    source, target = _largest_groups(root, partition, 2)
    copy = _latest_rows(root, [source]).slice(0, 1)
    for column, value in changes.items():
        copy = _set_column(copy, column, [value])
    stranger_id = _same_bucket_id(target.file_id)
    new_files = [(stranger_id, pa.concat_tables([_latest_rows(root, [target]), copy]))]
    _replace(root, {partition: (target,)}, {partition: new_files})
    return stranger_id, copy.column(RECORD_KEY)[0].as_py()


def break_by_splitting_a_bucket(root: Path, partition: str) -> tuple[str, str]:
    """Split a bucket's file group into two live groups with the same bucket id; returns both ids."""
    [group] = _largest_groups(root, partition, 1)
    rows = _latest_rows(root, [group])
    assert rows.num_rows > 1, f"{partition}: bucket {group.file_id} has too few rows to split"
    first, second = _same_bucket_id(group.file_id), _same_bucket_id(group.file_id)
    half = rows.num_rows // 2
    _replace(
        root, {partition: (group,)}, {partition: [(first, rows.slice(0, half)), (second, rows.slice(half))]}
    )
    return first, second


def break_by_renumbering_a_bucket(root: Path, partition: str, num_buckets: int) -> str:
    """Give a bucket's file group the id of bucket ``old + num_buckets`` (beyond the count); returns it."""
    [group] = _largest_groups(root, partition, 1)
    file_id = new_bucket_file_id(bucket_id_from_file_id(group.file_id) + num_buckets)
    _replace(root, {partition: (group,)}, {partition: [(file_id, _latest_rows(root, [group]))]})
    return file_id


def break_by_erasing_a_record_key(root: Path, partition: str) -> str:
    """Rewrite a bucket's file group with one record's key null (as if meta fields were not populated)."""
    [group] = _largest_groups(root, partition, 1)
    rows = _latest_rows(root, [group])
    rows = _set_column(rows, RECORD_KEY, [None, *rows.column(RECORD_KEY).to_pylist()[1:]])
    file_id = _same_bucket_id(group.file_id)
    _replace(root, {partition: (group,)}, {partition: [(file_id, rows)]})
    return file_id


def _largest_groups(root: Path, partition: str, count: int) -> list[FileGroup]:
    """The ``count`` live groups of ``partition`` holding the most rows (ties by file id)."""
    groups = live_groups(root)[partition]
    assert len(groups) >= count, f"{partition}: needs {count} file groups, has {len(groups)}"
    sizes = {g.file_id: _latest_rows(root, [g]).num_rows for g in groups}
    return sorted(groups, key=lambda g: (-sizes[g.file_id], g.file_id))[:count]


def _same_bucket_id(file_id: str) -> str:
    """A new file id for the bucket ``file_id`` holds (a different UUID)."""
    return new_bucket_file_id(bucket_id_from_file_id(file_id))


def _latest_rows(root: Path, groups: Collection[FileGroup]) -> pa.Table:
    files = [g.latest_base_file for g in groups]
    return pa.concat_tables(pq.read_table(root / f.path) for f in files if f is not None)


def _replace(root: Path, old: Mapping[str, Collection[FileGroup]], new_files: NewFiles) -> None:
    """One insert-overwrite replacecommit: requested -> inflight -> base files -> completed."""
    storage = LocalStorage(root)
    table = load_table(storage)
    store = timeline_store(storage, table)
    partitions = sorted(set(old) | set(new_files))
    instant = store.new_instant_time()
    inflight = store.start(
        store.request(instant, Action.REPLACE_COMMIT),
        CommitMetadata(INSERT_OVERWRITE, dict.fromkeys(partitions, ())),
    )
    stats = {
        partition: tuple(
            _write_base_file(root, partition, file_id, rows, instant=instant, task=task)
            for task, (file_id, rows) in enumerate(new_files.get(partition, []))
        )
        for partition in partitions
    }
    metadata = CommitMetadata(
        INSERT_OVERWRITE,
        write_stats=stats,
        replaced_file_ids={p: tuple(g.file_id for g in old.get(p, ())) for p in partitions},
        extra_metadata={"schema": latest_table_schema(storage, table) or ""},
    )
    store.complete(inflight, metadata)


def _write_base_file(
    root: Path, partition: str, file_id: str, rows: pa.Table, *, instant: str, task: int
) -> WriteStat:
    """``rows`` as a new base file of ``file_id`` written at ``instant``, with its meta columns updated."""
    file_name = f"{file_id}_{task}-1-0_{instant}.parquet"
    n = rows.num_rows
    meta = {
        "_hoodie_commit_time": [instant] * n,
        "_hoodie_commit_seqno": [f"{instant}_{task}_{i}" for i in range(n)],
        "_hoodie_file_name": [file_name] * n,
    }
    for column, values in meta.items():
        rows = _set_column(rows, column, values)
    path = partition_file_path(partition, file_name)
    pq.write_table(rows, root / path)
    size = (root / path).stat().st_size
    return WriteStat(partition, file_id, path, n, n, size, size)


def _set_column(rows: pa.Table, name: str, values: list[Any]) -> pa.Table:
    index = rows.column_names.index(name)
    field = rows.schema.field(index)
    return rows.set_column(index, field, pa.array(values, field.type))


@contextmanager
def no_bloom_filters(monkeypatch: Any) -> Iterator[Callable[[Path], None]]:
    """Files without Hudi's bloom filter, as a table's owner may set (``hoodie.parquet.bloom.filter.enabled``):
    the filter's 430 KB in every footer would outweigh a test table of a few hundred kilobytes, and no
    target file size below it could be reached. Off for the jobs of this process; the callable turns it
    off in a table's ``hoodie.properties``, for jobs of other processes."""
    with monkeypatch.context() as patch:
        patch.setitem(file_format.HUDI_DEFAULTS, file_format.BLOOM_ENABLED, "false")

        def in_table(root: Path) -> None:
            storage = LocalStorage(root)
            properties = read_table_properties(storage).set(file_format.BLOOM_ENABLED, "false")
            write_table_properties(storage, properties)

        yield in_table
