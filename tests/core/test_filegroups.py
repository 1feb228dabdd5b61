"""File slices as Hudi's file-system view builds them: log files named by their slice's base instant
(table version 6), or by the deltacommit that wrote them (version 8 on)."""

from __future__ import annotations

from hudi_bucket.core.filegroups import FileGroup, PartitionFile, live_file_groups
from hudi_bucket.core.timeline import Timeline

FILE_ID = "00000001-7d62-40ec-95a8-67a8821bb386-0"


def base(instant: str) -> str:
    return f"{FILE_ID}_0-1-0_{instant}.parquet"


def log(instant: str, version: int = 1) -> str:
    return f".{FILE_ID}_{instant}.log.{version}_0-1-0"


def group(names: list[str], timeline: list[str]) -> FileGroup:
    files = [PartitionFile("p", name, 10) for name in names]
    [only] = live_file_groups(files, Timeline.from_file_names(timeline), {})["p"]
    return only


def slices(g: FileGroup) -> list[tuple[str, str | None, list[str]]]:
    return [
        (s.base_instant, s.base_file.file_name if s.base_file else None, [lf.file_name for lf in s.log_files])
        for s in g.slices
    ]


def test_version_8_logs_join_the_newest_slice_based_before_their_deltacommit_completed() -> None:
    # A base at 100; deltacommits 200 and 300 log to it; compaction 400 (requested before 300
    # completed) makes a new base; deltacommit 500 logs to that.
    timeline = [
        "100_110.deltacommit",
        "200_210.deltacommit",
        "300_450.deltacommit",
        "400_420.commit",
        "500_510.deltacommit",
    ]
    names = [base("100"), log("200"), log("300"), base("400"), log("500")]
    assert slices(group(names, timeline)) == [
        ("100", base("100"), [log("200")]),
        ("400", base("400"), [log("300"), log("500")]),
    ]


def test_version_8_logs_of_a_group_without_base_file_make_one_slice() -> None:
    timeline = ["200_210.deltacommit", "300_310.deltacommit"]
    assert slices(group([log("300"), log("200")], timeline)) == [("200", None, [log("200"), log("300")])]


def test_logs_of_a_deltacommit_that_did_not_complete_are_not_data() -> None:
    timeline = ["100_110.deltacommit", "200.deltacommit.inflight"]
    assert slices(group([base("100"), log("200")], timeline)) == [("100", base("100"), [])]


def test_version_6_logs_carry_their_slice_base_instant() -> None:
    timeline = ["100.deltacommit", "200.deltacommit", "300.commit"]
    names = [base("100"), log("100", 1), log("100", 2), base("300"), log("300")]
    assert slices(group(names, timeline)) == [
        ("100", base("100"), [log("100", 1), log("100", 2)]),
        ("300", base("300"), [log("300")]),
    ]
