"""Replacecommits written by our timeline store are read by hudi-rs as Hudi's own would be."""

from __future__ import annotations

import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi import HudiTableBuilder

from hudi_bucket.core.commits import INSERT_OVERWRITE, CommitMetadata, WriteStat
from hudi_bucket.core.filegroups import FileGroup
from hudi_bucket.core.timeline import Action, State
from hudi_bucket.hudi.fs_view import load_file_groups
from hudi_bucket.hudi.rollback import rollback
from hudi_bucket.hudi.table import (
    HudiTable,
    disable_metadata_table,
    latest_table_schema,
    load_table,
    timeline_store,
)
from hudi_bucket.storage import LocalStorage
from lib.hudi_rs import records


def merge_into_new_file_group(
    root: Path, partition: str, groups: tuple[FileGroup, ...], instant: str
) -> WriteStat:
    """Rewrite the groups' latest base files into one new file group written at ``instant``."""
    sources = [pq.read_table(root / g.latest_base_file.path) for g in groups if g.latest_base_file]
    rows = pa.concat_tables(sources)
    file_id = f"{uuid.uuid4()}-0"
    file_name = f"{file_id}_0-1-0_{instant}.parquet"
    n = rows.num_rows
    meta = {
        "_hoodie_commit_time": pa.array([instant] * n),
        "_hoodie_commit_seqno": pa.array([f"{instant}_0_{i}" for i in range(n)]),
        "_hoodie_file_name": pa.array([file_name] * n),
    }
    for column, values in meta.items():
        rows = rows.set_column(rows.column_names.index(column), column, values)
    path = f"{partition}/{file_name}" if partition else file_name
    pq.write_table(rows, root / path)
    size = (root / path).stat().st_size
    return WriteStat(partition, file_id, path, n, n, size, size)


def overwrite_partition(root: Path, partition: str) -> tuple[HudiTable, str]:
    """Our own insert-overwrite of one partition: requested -> inflight -> data -> completed."""
    storage = LocalStorage(root)
    table = load_table(storage)
    store = timeline_store(storage, table)
    old = load_file_groups(storage, table, (partition,))[partition]
    instant = store.new_instant_time()
    requested = store.request(instant, Action.REPLACE_COMMIT)
    inflight = store.start(requested, CommitMetadata(INSERT_OVERWRITE, {partition: ()}))
    stat = merge_into_new_file_group(root, partition, old, instant)
    metadata = CommitMetadata(
        INSERT_OVERWRITE,
        write_stats={partition: (stat,)},
        replaced_file_ids={partition: tuple(g.file_id for g in old)},
        extra_metadata={"schema": latest_table_schema(storage, table) or ""},
    )
    store.complete(inflight, metadata)
    return load_table(storage), stat.file_id


@pytest.mark.parametrize(
    ("name", "partition"),
    [
        ("cow_v6", "10"),
        ("cow_v6_complex_hivestyle", "part=10/sub=1"),
        ("cow_v8", "10"),
        ("cow_v8_nonpartitioned", ""),
        ("cow_v9", "20"),
        ("cow_v9_meta", "part=30"),
    ],
)
def test_hudi_rs_reads_our_replacecommit(written_table, name: str, partition: str) -> None:
    root = written_table(name)
    storage = LocalStorage(root)
    if load_table(storage).metadata_table_live:
        # Readers list files from a live metadata table, which a replacecommit alone leaves stale.
        assert not disable_metadata_table(storage, load_table(storage)).metadata_table_live
    before = records(root)
    old_ids = {s.file_id for s in HudiTableBuilder.from_base_uri(str(root)).build().get_file_slices()}

    table, new_id = overwrite_partition(root, partition)

    assert table.timeline.latest_completed.action is Action.REPLACE_COMMIT
    slices = HudiTableBuilder.from_base_uri(str(root)).build().get_file_slices()
    in_partition = {s.file_id for s in slices if s.partition_path == partition}
    assert in_partition == {new_id}
    assert {s.file_id for s in slices} - {new_id} < old_ids
    assert records(root) == before


def test_a_pending_replacecommit_is_invisible_and_is_rolled_back_without_a_trace(written_table) -> None:
    root = written_table("cow_v8")
    storage = LocalStorage(root)
    table = load_table(storage)
    store = timeline_store(storage, table)
    before = records(root)
    old = load_file_groups(storage, table, ("10",))["10"]
    instant = store.new_instant_time()
    inflight = store.start(store.request(instant, Action.REPLACE_COMMIT), CommitMetadata(INSERT_OVERWRITE))
    stat = merge_into_new_file_group(root, "10", old, instant)

    # A crash here: readers (ours and hudi-rs) still see the old file groups only.
    pending = load_table(storage)
    assert pending.timeline.get(instant).state is State.INFLIGHT
    assert pending.timeline.pending_replace_timestamps() == {instant}
    assert load_file_groups(storage, pending, ("10",))["10"] == old
    assert records(root) == before
    assert stat.file_id not in {
        s.file_id for s in HudiTableBuilder.from_base_uri(str(root)).build().get_file_slices()
    }

    rollback(storage, pending, inflight.timestamp)
    assert load_table(storage).timeline == table.timeline
    assert not (root / stat.path).exists()
    assert records(root) == before


def test_layout_2_completions_carry_a_completion_time_after_the_instant(written_table) -> None:
    table, _ = overwrite_partition(written_table("cow_v8"), "20")
    done = table.timeline.latest_completed
    assert done.completion_time is not None
    assert done.completion_time > done.timestamp
