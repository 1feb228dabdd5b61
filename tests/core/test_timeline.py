"""The timeline model reads instant file names as Hudi names them, in both layouts."""

from __future__ import annotations

from datetime import datetime

import pytest

from hudi_bucket.core.timeline import Action, Instant, State, Timeline, TimelineLayout, new_instant_time

V1, V2 = TimelineLayout.V1, TimelineLayout.V2


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "20240707001303088.replacecommit.requested",
            Instant("20240707001303088", Action.REPLACE_COMMIT, State.REQUESTED),
        ),
        (
            "20240707001303088.replacecommit.inflight",
            Instant("20240707001303088", Action.REPLACE_COMMIT, State.INFLIGHT),
        ),
        (
            "20240707001303088.replacecommit",
            Instant("20240707001303088", Action.REPLACE_COMMIT, State.COMPLETED),
        ),
        ("20240707001302376.inflight", Instant("20240707001302376", Action.COMMIT, State.INFLIGHT)),
        (
            "20260307162454799_20260307162456102.replacecommit",
            Instant("20260307162454799", Action.REPLACE_COMMIT, State.COMPLETED, "20260307162456102"),
        ),
        (
            "20260307162454799.clustering.requested",
            Instant("20260307162454799", Action.CLUSTERING, State.REQUESTED),
        ),
        ("hoodie.properties", None),
        ("history", None),
        ("20260307162454799.unknownaction", None),
        ("20260307162454799.commit.requested.crc", None),
    ],
)
def test_instant_file_names_parse(name: str, expected: Instant | None) -> None:
    assert Instant.parse(name) == expected


@pytest.mark.parametrize("state", list(State))
@pytest.mark.parametrize("action", [Action.COMMIT, Action.REPLACE_COMMIT, Action.CLEAN])
def test_file_names_round_trip_in_both_layouts(action: Action, state: State) -> None:
    for layout in (V1, V2):
        completion = "20260101000000999" if state is State.COMPLETED and layout is V2 else None
        instant = Instant("20260101000000123", action, state, completion)
        assert Instant.parse(instant.file_name(layout)) == instant


def test_each_instant_appears_once_in_its_most_advanced_state() -> None:
    timeline = Timeline.from_file_names(
        [
            "001.commit.requested",
            "001.inflight",
            "001_002.commit",
            "003.clustering.requested",
            "003.clustering.inflight",
            "003_004.replacecommit",
            "005.replacecommit.requested",
            "006.commit.requested",
            "006.inflight",
        ]
    )
    assert [(i.timestamp, i.action, i.state) for i in timeline.instants] == [
        ("001", Action.COMMIT, State.COMPLETED),
        ("003", Action.REPLACE_COMMIT, State.COMPLETED),
        ("005", Action.REPLACE_COMMIT, State.REQUESTED),
        ("006", Action.COMMIT, State.INFLIGHT),
    ]
    assert timeline.latest_completed == Instant("003", Action.REPLACE_COMMIT, State.COMPLETED, "004")
    assert timeline.pending_replace_timestamps() == frozenset({"005"})
    assert timeline.last_time == "006"


def test_data_is_committed_when_its_instant_completed_or_was_archived() -> None:
    timeline = Timeline.from_file_names(["100_101.commit", "200.inflight"])
    assert timeline.is_committed("100")
    assert not timeline.is_committed("200")  # an inflight (or failed) writer
    assert timeline.is_committed("050")  # before the active timeline: archived, hence completed
    assert not timeline.is_committed("150")  # never on the timeline: a failed write rolled back
    assert not Timeline(()).is_committed("100")


def test_new_instant_times_sort_after_everything_on_the_timeline() -> None:
    now = datetime(2026, 11, 21, 9, 30, 0, 123456)
    assert new_instant_time(now, None) == "20261121093000123"
    assert new_instant_time(now, "20261121093000123") == "20261121093000124"
    assert new_instant_time(now, "20991231235959999") == "21000101000000000"
    # Legacy 14-digit instants (and the initial config instant) compare as strings, as in Hudi.
    assert new_instant_time(now, "20261121093000") == "20261121093000123"
    assert new_instant_time(now, "20271121093000") == "20271121093000001"
