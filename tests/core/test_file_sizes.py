"""How evenly a table's data is spread over its file groups: the largest against the median."""

from __future__ import annotations

from hudi_bucket.core.file_sizes import FileGroupSizes, group_bytes
from hudi_bucket.core.filegroups import BaseFile, FileGroup, FileSlice, LogFile

BOOTSTRAP = "00000000000001"


def bucket(index: int, *slices: tuple[str, int | None, list[int]]) -> FileGroup:
    """A file group of bucket ``index``: each slice its base instant, its base file's size (None: no base
    file) and its log files' sizes."""
    file_id = f"{index:08d}-7d62-40ec-95a8-67a8821bb386-0"
    built = []
    for instant, base_size, log_sizes in slices:
        base = None if base_size is None else BaseFile("p", f"{file_id}_0-1-0_{instant}.parquet", file_id,
                                                       "0-1-0", instant, base_size)  # fmt: skip
        logs = tuple(
            LogFile("p", f".{file_id}_{instant}.log.{n}_0-1-0", file_id, instant, n, size)
            for n, size in enumerate(log_sizes, start=1)
        )
        built.append(FileSlice("p", file_id, instant, base, logs))
    return FileGroup("p", file_id, tuple(built))


def test_a_group_is_measured_by_its_latest_slice_base_file_and_log_files_together() -> None:
    older_and_newer = bucket(0, ("100", 500, [50]), ("200", 300, [20, 30]))
    assert group_bytes(older_and_newer) == 350
    assert group_bytes(bucket(1, ("100", None, [40, 2]))) == 42  # a slice of log files alone


def test_a_bootstrapped_group_is_left_out_its_data_being_in_the_source_files() -> None:
    assert group_bytes(bucket(0, (BOOTSTRAP, 10, []))) is None
    assert group_bytes(FileGroup("p", "00000000-x-0")) is None  # no slice yet


def test_the_skew_is_the_largest_group_against_the_median_one() -> None:
    sizes = FileGroupSizes.of(bucket(i, ("100", size, [])) for i, size in enumerate([100, 120, 400, 110]))
    assert sizes == FileGroupSizes(count=4, largest_bytes=400, median_bytes=110)  # the lower middle one
    assert sizes.skew == 400 / 110


def test_a_table_without_measured_groups_has_no_skew() -> None:
    nothing = FileGroupSizes.of([bucket(0, (BOOTSTRAP, 10, []))])
    assert nothing == FileGroupSizes()
    assert nothing.skew is None
    assert nothing.to_dict() == {"count": 0, "largestBytes": 0, "medianBytes": 0}
