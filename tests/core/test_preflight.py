"""Preflight refuses every table state a rewrite could lose data in, naming the thing and the fix."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from hudi_bucket.core.engine import Engine, choose_engine, native_repair_hint
from hudi_bucket.core.preflight import (
    METADATA_TABLE_NOTE,
    Check,
    PreflightResult,
    TableFacts,
    completed_after,
    concurrent_writes,
    preflight,
)
from hudi_bucket.core.properties import TableConfig, parse_properties
from hudi_bucket.core.timeline import Action, Instant, State, Timeline
from hudi_bucket.errors import HudiBucketError, PreflightError
from hudi_bucket.hudi.table import HudiTable

SAFE = TableFacts(table_version=9, metadata_table_live=False, drop_partition_columns=False)
COMMIT, REPLACE = Action.COMMIT, Action.REPLACE_COMMIT
REQUESTED, INFLIGHT, COMPLETED = State.REQUESTED, State.INFLIGHT, State.COMPLETED


def check(facts: TableFacts, *, ours: frozenset[str] = frozenset(), disable: bool = False) -> PreflightResult:
    return preflight(facts, our_pending=ours, disable_metadata_table=disable)


def only_refusal(result: PreflightResult) -> tuple[Check, str]:
    (finding,) = result.refusals
    return finding.check, str(finding)


def test_a_safe_table_passes_with_nothing_to_do() -> None:
    result = check(SAFE)
    assert result == PreflightResult(refusals=())
    assert result.ok
    result.raise_if_refused()


def test_dropped_partition_columns_are_refused() -> None:
    kind, text = only_refusal(check(replace(SAFE, drop_partition_columns=True)))
    assert kind is Check.DROPPED_PARTITION_COLUMNS
    assert "hoodie.datasource.write.drop.partition.columns=true" in text
    assert "cannot be verified" in text


@pytest.mark.parametrize("base_format", ["ORC", "HFILE"])
def test_base_files_other_than_parquet_are_refused(base_format: str) -> None:
    kind, text = only_refusal(check(replace(SAFE, base_file_format=base_format)))
    assert kind is Check.BASE_FILE_FORMAT
    assert base_format in text
    assert "PARQUET" in text


def test_parquet_is_accepted_in_any_case() -> None:
    assert check(replace(SAFE, base_file_format="parquet")).ok


def test_a_live_metadata_table_is_refused_unless_it_may_be_disabled() -> None:
    live = replace(SAFE, metadata_table_live=True)
    kind, text = only_refusal(check(live))
    assert kind is Check.METADATA_TABLE
    assert "vanish" in text
    assert "--disable-metadata-table" in text
    assert not check(live).disable_metadata_table


def test_consent_to_disable_the_metadata_table_becomes_an_action_and_a_note() -> None:
    result = check(replace(SAFE, metadata_table_live=True), disable=True)
    assert result.ok
    assert result.disable_metadata_table
    assert result.notes == (METADATA_TABLE_NOTE,)
    assert "re-enable it with Hudi after the rescale" in METADATA_TABLE_NOTE


def test_consent_without_a_live_metadata_table_does_nothing() -> None:
    assert check(SAFE, disable=True) == PreflightResult(refusals=())


def test_pending_instants_of_others_are_refused_with_action_and_state() -> None:
    pending = (
        Instant("20250101000000001", COMMIT, INFLIGHT),
        Instant("20250101000000002", Action.CLUSTERING, REQUESTED),
    )
    kind, text = only_refusal(check(replace(SAFE, pending=pending)))
    assert kind is Check.PENDING_INSTANTS
    assert "20250101000000001 commit (inflight)" in text
    assert "20250101000000002 clustering (requested)" in text
    assert "roll them back with Hudi" in text
    assert "stop every writer during a rescale" in text


def test_many_pending_instants_are_named_up_to_a_bound() -> None:
    pending = tuple(Instant(f"202501010000000{n:02d}", COMMIT, INFLIGHT) for n in range(12))
    _, text = only_refusal(check(replace(SAFE, pending=pending)))
    assert "12 pending instant(s)" in text
    assert "20250101000000009 commit" in text
    assert "20250101000000010" not in text
    assert "and 2 more" in text


def test_our_own_pending_instants_are_not_refused_but_listed_to_clean_up() -> None:
    ours = Instant("20250101000000003", REPLACE, INFLIGHT)
    theirs = Instant("20250101000000004", COMMIT, REQUESTED)
    result = check(replace(SAFE, pending=(ours, theirs)), ours=frozenset({ours.timestamp}))
    kind, text = only_refusal(result)
    assert kind is Check.PENDING_INSTANTS
    assert ours.timestamp not in text
    assert result.to_clean_up == (ours,)
    assert result.notes == (
        "our pending instant 20250101000000003 replacecommit (inflight) will be rolled back first",
    )


def test_a_plan_notes_pending_instants_of_others_instead_of_refusing_them() -> None:
    """A plan is made while the writers run (a streaming writer always has a commit pending); the
    apply, made with them stopped, refuses."""
    ours = Instant("20250101000000003", REPLACE, INFLIGHT)
    theirs = Instant("20250101000000004", COMMIT, INFLIGHT)
    facts = replace(SAFE, pending=(ours, theirs))
    planned = preflight(
        facts,
        our_pending=frozenset({ours.timestamp}),
        disable_metadata_table=False,
        others_pending_noted=True,
    )
    assert planned.ok
    assert planned.to_clean_up == (ours,)
    assert planned.notes == (
        "our pending instant 20250101000000003 replacecommit (inflight) will be rolled back first",
        "1 pending instant(s) not started by this tool: 20250101000000004 commit (inflight): planned all "
        "the same; the apply refuses them (let their writers finish, or roll them back with Hudi; stop "
        "every writer during a rescale)",
    )
    assert planned.to_dict()["notes"] == list(planned.notes)
    kind, _ = only_refusal(check(facts, ours=frozenset({ours.timestamp})))
    assert kind is Check.PENDING_INSTANTS


def test_a_plan_still_refuses_everything_else() -> None:
    facts = replace(
        SAFE, drop_partition_columns=True, pending=(Instant("20250101000000004", COMMIT, INFLIGHT),)
    )
    result = preflight(
        facts, our_pending=frozenset(), disable_metadata_table=False, others_pending_noted=True
    )
    assert [f.check for f in result.refusals] == [Check.DROPPED_PARTITION_COLUMNS]
    assert len(result.notes) == 1


def test_a_plan_with_no_pending_instant_of_others_notes_nothing() -> None:
    result = preflight(SAFE, our_pending=frozenset(), disable_metadata_table=False, others_pending_noted=True)
    assert result == PreflightResult(refusals=())


def test_only_our_own_pending_instants_pass() -> None:
    ours = Instant("20250101000000003", REPLACE, REQUESTED)
    result = check(replace(SAFE, pending=(ours,)), ours=frozenset({ours.timestamp, "20250101000000009"}))
    assert result.ok
    assert result.to_clean_up == (ours,)


def test_every_problem_is_reported_at_once_in_one_error() -> None:
    facts = TableFacts(
        table_version=9,
        metadata_table_live=True,
        drop_partition_columns=True,
        pending=(Instant("20250101000000001", COMMIT, INFLIGHT),),
        base_file_format="ORC",
    )
    result = check(facts)
    hudi_only = (Check.TABLE_VERSION, Check.SECONDARY_INDEX)
    assert [f.check for f in result.refusals] == [c for c in Check if c not in hudi_only]
    with pytest.raises(PreflightError) as error:
        result.raise_if_refused()
    assert isinstance(error.value, HudiBucketError)
    assert error.value.problems == tuple(str(f) for f in result.refusals)
    assert all(problem in str(error.value) for problem in error.value.problems)
    assert "nothing was written" in str(error.value)


def test_the_result_is_json_safe_for_the_report() -> None:
    ours = Instant("20250101000000003", REPLACE, INFLIGHT)
    facts = replace(SAFE, base_file_format="ORC", metadata_table_live=True, pending=(ours,))
    report = json.loads(json.dumps(check(facts, ours=frozenset({ours.timestamp}), disable=True).to_dict()))
    assert report["ok"] is False
    assert report["refusals"][0]["check"] == "base-file-format"
    assert report["to_clean_up"] == ["20250101000000003 replacecommit (inflight)"]
    assert report["disable_metadata_table"] is True


def test_facts_are_read_from_a_loaded_table() -> None:
    properties = parse_properties(
        b"hoodie.table.name=t\nhoodie.table.type=MERGE_ON_READ\nhoodie.table.version=8\n"
        b"hoodie.table.metadata.partitions=column_stats,files\n"
        b"hoodie.datasource.write.drop.partition.columns=true\nhoodie.table.base.file.format=orc\n"
    )
    timeline = Timeline.from_file_names(
        ["20250101000000001_20250101000000002.commit", "20250101000000003.inflight"]
    )
    table = HudiTable("file:///t", TableConfig(properties), timeline, metadata_table_exists=True)
    assert table.facts() == TableFacts(
        table_version=8,
        metadata_table_live=True,
        drop_partition_columns=True,
        pending=(Instant("20250101000000003", COMMIT, INFLIGHT),),
        base_file_format="ORC",
    )


# --- writes that completed beside ours -------------------------------------------------------------

OURS = "20250101000000005"
BEFORE = Timeline(
    (
        Instant("20250101000000001", COMMIT, COMPLETED),
        Instant("20250101000000002", COMMIT, INFLIGHT),
    )
)
NOW = Timeline(
    (
        Instant("20250101000000001", COMMIT, COMPLETED),
        Instant("20250101000000002", COMMIT, COMPLETED),  # was pending when we started
        Instant(OURS, REPLACE, INFLIGHT),
        Instant("20250101000000006", COMMIT, COMPLETED),  # started and finished after ours
        Instant("20250101000000007", Action.CLEAN, COMPLETED),
        Instant("20250101000000008", Action.ROLLBACK, COMPLETED),
        Instant("20250101000000009", COMMIT, INFLIGHT),  # not completed: nothing to judge yet
    )
)


def stamps(instants: tuple[Instant, ...]) -> list[str]:
    return [i.timestamp for i in instants]


def test_completed_after_lists_what_completed_since_the_first_reading() -> None:
    assert stamps(completed_after(BEFORE, NOW, OURS)) == [
        "20250101000000002",
        "20250101000000006",
        "20250101000000007",
        "20250101000000008",
    ]


def test_our_own_instant_is_never_a_concurrent_write() -> None:
    now = Timeline((*NOW.instants[:2], Instant(OURS, REPLACE, COMPLETED, "20250101000000010")))
    assert completed_after(BEFORE, now, OURS) == (NOW.instants[1],)


def test_writes_touching_our_partitions_conflict_and_others_do_not() -> None:
    touched = {
        "20250101000000002": {"dt=1", "dt=9"},
        "20250101000000006": {"dt=2"},
        "20250101000000008": set(),
    }
    assert stamps(concurrent_writes(BEFORE, NOW, OURS, {"dt=1"}, touched)) == ["20250101000000002"]
    assert stamps(concurrent_writes(BEFORE, NOW, OURS, {"dt=3"}, touched)) == []


def test_an_instant_whose_partitions_are_unknown_conflicts() -> None:
    touched = {"20250101000000002": {"dt=9"}, "20250101000000006": {"dt=9"}}
    # The rollback's partitions were not given: it may have removed rows anywhere.
    assert stamps(concurrent_writes(BEFORE, NOW, OURS, {"dt=1"}, touched)) == ["20250101000000008"]


def test_cleans_never_conflict() -> None:
    assert "20250101000000007" not in stamps(concurrent_writes(BEFORE, NOW, OURS, {"dt=1"}, {}))


def test_a_non_partitioned_table_conflicts_on_its_one_partition() -> None:
    touched = {"20250101000000002": {""}, "20250101000000006": set(), "20250101000000008": set()}
    assert stamps(concurrent_writes(BEFORE, NOW, OURS, {""}, touched)) == ["20250101000000002"]


# --- the engine -----------------------------------------------------------------------------------------

ORC, WITH_MDT = replace(SAFE, base_file_format="ORC"), replace(SAFE, metadata_table_live=True)


@pytest.mark.parametrize(
    ("facts", "disable", "chosen"),
    [
        (SAFE, False, Engine.NATIVE),  # MERGE_ON_READ too: Native reads its slices with Hudi's reader
        (WITH_MDT, False, Engine.HUDI),
        (WITH_MDT, True, Engine.NATIVE),  # the user let the metadata table go: Native keeps shuffle-free
    ],
)
def test_auto_picks_native_where_native_can_else_hudi(
    facts: TableFacts, disable: bool, chosen: Engine
) -> None:
    assert choose_engine(Engine.AUTO, facts, disable_metadata_table=disable) is chosen
    result = preflight(facts, our_pending=frozenset(), disable_metadata_table=disable, engine=Engine.AUTO)
    assert (result.ok, result.engine) == (True, chosen)


def test_auto_picks_native_for_a_metadata_table_hudis_metadata_writer_keeps() -> None:
    kept = preflight(
        WITH_MDT,
        our_pending=frozenset(),
        disable_metadata_table=False,
        engine=Engine.AUTO,
        metadata_writer=True,
    )
    assert (kept.ok, kept.engine, kept.disable_metadata_table) == (True, Engine.NATIVE, False)
    secondary = replace(WITH_MDT, secondary_indexes=("idx_name",))  # no key changes: nothing to rebuild
    assert preflight(
        secondary,
        our_pending=frozenset(),
        disable_metadata_table=False,
        engine=Engine.NATIVE,
        metadata_writer=True,
    ).ok


@pytest.mark.parametrize("version", [6, 9])
def test_native_refuses_a_metadata_table_without_hudis_metadata_writer_saying_why(version: int) -> None:
    facts = replace(WITH_MDT, table_version=version)
    kind, text = only_refusal(
        preflight(
            facts,
            our_pending=frozenset(),
            disable_metadata_table=False,
            engine=Engine.NATIVE,
            metadata_writer=False,
        )
    )
    assert kind is Check.METADATA_TABLE
    assert "Hudi's Spark bundle" in text


def test_a_partitioned_record_index_goes_to_hudis_procedure_which_keeps_it() -> None:
    partitioned = replace(WITH_MDT, record_index_partitioned=True)

    def run(engine: Engine, disable: bool = False) -> PreflightResult:
        return preflight(
            partitioned,
            our_pending=frozenset(),
            disable_metadata_table=disable,
            engine=engine,
            metadata_writer=True,
        )

    assert (run(Engine.AUTO).ok, run(Engine.AUTO).engine) == (True, Engine.HUDI)
    kind, text = only_refusal(run(Engine.NATIVE))
    assert kind is Check.METADATA_TABLE
    assert "record index is partitioned" in text
    assert "engine: Hudi" in run(Engine.NATIVE).refusals[0].fix
    let_go = run(Engine.AUTO, disable=True)  # the user's consent to disable it lets Native run
    assert (let_go.ok, let_go.engine, let_go.disable_metadata_table) == (True, Engine.NATIVE, True)


def test_native_keeps_a_version_6_metadata_table_which_the_hudi_engine_cannot_rescale() -> None:
    old = replace(WITH_MDT, table_version=6)
    auto = preflight(
        old, our_pending=frozenset(), disable_metadata_table=False, engine=Engine.AUTO, metadata_writer=True
    )
    assert (auto.ok, auto.engine, auto.disable_metadata_table) == (True, Engine.NATIVE, False)


def test_a_repair_refused_by_the_hudi_engine_names_what_lets_native_run() -> None:
    assert "--disable-metadata-table" in native_repair_hint(Engine.AUTO)
    assert "engine: Native" in native_repair_hint(Engine.HUDI)


def test_the_hudi_engine_takes_every_shape_hudi_writes_but_not_an_old_table_version() -> None:
    odd = replace(ORC, metadata_table_live=True, drop_partition_columns=True)
    hudi = preflight(odd, our_pending=frozenset(), disable_metadata_table=False, engine=Engine.HUDI)
    assert (hudi.ok, hudi.disable_metadata_table) == (True, False)
    old = replace(WITH_MDT, table_version=6)
    kind, text = only_refusal(
        preflight(old, our_pending=frozenset(), disable_metadata_table=False, engine=Engine.HUDI)
    )
    assert kind is Check.TABLE_VERSION
    assert "version 6" in text
    assert "Native engine" in text


def test_a_chosen_engine_is_kept_and_native_still_refuses_what_it_cannot_do() -> None:
    result = preflight(ORC, our_pending=frozenset(), disable_metadata_table=False, engine=Engine.NATIVE)
    assert [f.check for f in result.refusals] == [Check.BASE_FILE_FORMAT]


def test_the_hudi_engine_refuses_a_table_with_a_secondary_index_saying_how_to_rebuild_it() -> None:
    indexed = replace(WITH_MDT, secondary_indexes=("idx_name",))
    kind, text = only_refusal(
        preflight(indexed, our_pending=frozenset(), disable_metadata_table=False, engine=Engine.AUTO)
    )
    assert kind is Check.SECONDARY_INDEX
    assert "idx_name" in text
    assert "DROP INDEX idx_name" in text
