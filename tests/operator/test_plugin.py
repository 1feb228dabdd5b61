"""`kubectl hbt`: what it prints for tables in each phase, and what it changes, through kubectl.

The views are read from statuses made the operator's way (a job's plan report bounded by
``PlanSummary.of``); the commands run against a kubectl stand-in that records its calls here, and
against the real API server in tests/e2e/test_plugin_on_the_api_server.py.
"""

from __future__ import annotations

import json
import os
import re
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from hudi_bucket.contract.reports import JobReport
from hudi_bucket_operator.plugin import main as plugin
from hudi_bucket_operator.plugin.views import (
    Table,
    file_size_chart,
    history_view,
    plan_view,
    table_list,
    terminal_safe,
)
from hudi_bucket_operator.resource.api import APPROVE, DECIDED_BY, DENY, REASON, VERIFY
from hudi_bucket_operator.resource.table_status import PlanSummary, TableStatus

REPORTS = Path(__file__).parents[1] / "contract" / "reports"
NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
PLAN = PlanSummary.of(JobReport.from_json((REPORTS / "plan.json").read_bytes()).plan_result().plan, 100)


def condition(kind: str, status: str, reason: str, since: str) -> dict[str, str]:
    return {"type": kind, "status": status, "reason": reason, "lastTransitionTime": since}


def resource(name: str, status: dict[str, Any], **metadata: Any) -> dict[str, Any]:
    return {
        "metadata": {"namespace": "lake", "name": name, **metadata},
        "spec": {"table": {"uri": f"s3a://lake/{name}"}, "buckets": {"default": 4}},
        "status": status,
    }


AWAITING = resource(
    "orders",
    {
        "phase": "AwaitingApproval",
        "conditions": [
            condition("Ready", "False", "AwaitingApproval", "2026-11-24T08:00:00Z"),
            condition("Reconciling", "False", "Idle", "2026-11-24T09:30:00Z"),
        ],
        "config": {"expressions": "^region=emea$,4", "default": 4},
        "plan": TableStatus(plan=PLAN).to_api()["plan"],
    },
)
READY = resource(
    "customers",
    {
        "phase": "Ready",
        "config": {"expressions": "a,8;b,2", "default": 4},
        "plan": {"id": "sha256:" + "0" * 64, "noop": True},
        "layout": {"checkedAt": "2026-11-24T11:00:00Z", "violations": 0, "fileGroups": 10,
                   "largestFileGroupBytes": 300 * 2**20, "medianFileGroupBytes": 125 * 2**20},
        "history": [
            {"job": "customers-apply-1", "planId": "sha256:" + "3f9a" * 16, "partitions": 2, "rows": 1200,
             "seconds": 42.4, "outcome": "Succeeded", "finished": "2026-11-24T01:00:00Z",
             "writersDowntimeSeconds": 61.0},
        ],
    },
)  # fmt: skip
APPLYING = resource(
    "events",
    {
        "phase": "Applying",
        "writers": {
            "step": "Applying", "planId": "sha256:" + "3f9a" * 16, "generation": 3, "retryToken": "",
            "checkRecords": False, "pausedAt": "2026-11-24T11:45:00Z",
            "items": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "ingest",
                       "plural": "deployments", "prior": {"replicas": 2}}],
        },
        "layout": {"checkedAt": "2026-11-22T12:00:00Z", "violations": 3},
    },
)  # fmt: skip
NEW = resource("fresh", {})


def test_the_list_shows_each_tables_phase_plan_wait_verify_skew_and_writers() -> None:
    shown = table_list([Table.of(r) for r in (AWAITING, READY, APPLYING, NEW)], NOW).splitlines()
    assert shown[0].split() == [
        "NAMESPACE",
        "NAME",
        "PHASE",
        "CONFIG",
        "PLAN",
        "WAITING",
        "VERIFIED",
        "SKEW",
        "WRITERS",
    ]
    rows = {line.split()[1]: line for line in shown[1:]}
    assert list(rows) == ["customers", "events", "fresh", "orders"]  # sorted by namespace and name
    assert "AwaitingApproval" in rows["orders"]
    assert "4b8d1e4d0bec 3 partitions" in rows["orders"]
    assert " 2h " in rows["orders"]  # waiting since planning ended (Reconciling turned False at 09:30)
    assert "1 rule, default 4" in rows["orders"]
    assert "none needed" in rows["customers"]
    assert "ok 1h ago" in rows["customers"]
    assert "2.4x of 300.0 MiB" in rows["customers"]  # the largest file group against the median
    assert "3 violations 2d ago   -" in rows["events"]  # a check that measured no size (an older job)
    assert "2 rules, default 4" in rows["customers"]
    assert "3 violations 2d ago" in rows["events"]
    assert rows["events"].endswith("1 paused 15m")
    assert rows["fresh"].split()[2:] == ["New", "-", "-", "-", "-", "-", "-"]
    assert table_list([], NOW) == "No HudiBucketTables found."


def test_the_wide_list_adds_why_a_table_is_not_ready_and_when_its_window_opens() -> None:
    stalled = {"type": "Ready", "status": "False", "reason": "JobFailed", "message": "the job failed",
               "lastTransitionTime": "2026-11-24T11:00:00Z"}  # fmt: skip
    broken = resource("broken", {"phase": "Stalled", "conditions": [stalled]})
    shown = table_list(
        [Table.of(r) for r in (broken, WAITING_FOR_WINDOW, READY)], NOW, wide=True
    ).splitlines()
    assert shown[0].split()[-2:] == ["REASON", "WINDOW"]
    rows = {line.split()[1]: line.split() for line in shown[1:]}
    assert rows["broken"][-2:] == ["JobFailed", "-"]
    assert rows["night"][-3:] == ["-", "in", "13h"]  # NOW is noon
    assert rows["customers"][-2:] == ["-", "-"]
    assert table_list([Table.of(READY)], NOW).splitlines()[0].split()[-1] == "WRITERS"  # not wide


def test_an_approved_plan_says_so_in_the_list() -> None:
    approved = {**AWAITING, "spec": {"apply": {"approvedPlan": PLAN.id}}}
    assert "3 partitions, approved" in table_list([Table.of(approved)], NOW)
    by_annotation = {**AWAITING, "metadata": {**AWAITING["metadata"], "annotations": {APPROVE: PLAN.id}}}
    assert "3 partitions, approved" in table_list([Table.of(by_annotation)], NOW)
    # A deny wins, as the operator reads it.
    denied = {**approved, "metadata": {**AWAITING["metadata"], "annotations": {DENY: PLAN.id}}}
    assert "3 partitions, denied" in table_list([Table.of(denied)], NOW)
    assert "  approved  no: denied" in plan_view(Table.of(denied))


def test_the_plan_is_a_diff_of_bucket_counts_with_rows_bytes_and_file_sizes() -> None:
    shown = plan_view(Table.of(AWAITING))
    assert shown.startswith(
        f"Plan {PLAN.id}\n  table     lake/orders\n  approved  no: kubectl hbt approve orders"
    )
    assert "- config  ^region=emea$,4 default 4" in shown
    assert "+ config  ^region=emea$,8;^day=2026-11-(?:0[12]|10)$,16 default 4" in shown
    assert "rewrites  3 partitions, 9,101,900 rows, 2.0 GiB (1 to repair their layout)" in shown
    one = {
        **AWAITING,
        "status": {**AWAITING["status"], "plan": {**AWAITING["status"]["plan"], "partitions": 1}},
    }
    assert "rewrites  1 partition, " in plan_view(Table.of(one))
    lines = {line.split()[1]: line for line in shown.splitlines() if line.startswith("~ ")}
    assert set(lines) == {change.partition for change in PLAN.items or []}
    emea = next(item for item in PLAN.items or [] if item.partition == "region=emea")
    assert f"{emea.old_buckets} -> {emea.new_buckets}" in lines["region=emea"]
    assert "- -> 4" in lines["region=apac"]
    assert "convert" in lines["region=apac"]
    assert "Average file size per partition (before | after)" in shown


def test_the_file_size_chart_counts_each_partition_once_before_and_once_after() -> None:
    chart = file_size_chart(PLAN)[1:]
    assert len({line.index("|") for line in chart}) == 1  # one column
    # Each side of a band's row ends with its count, when the band has partitions.
    counted = [[int(found[1]) if (found := re.search(r"# (\d+)$", side.strip())) else 0 for side in line.split("|")]
               for line in chart]  # fmt: skip
    shown = len(PLAN.items or [])
    assert [sum(column) for column in zip(*counted, strict=True)] == [shown, shown]


def test_a_table_without_a_plan_or_with_nothing_to_do_says_so() -> None:
    assert plan_view(Table.of(NEW)) == "lake/fresh has no plan yet (phase New)."
    assert plan_view(Table.of(READY)).endswith("The table already is what the spec asks: nothing to apply.")


# --- a table's text, made harmless to the terminal ------------------------------------------------

# A table's author writes its patterns and its reason annotation, and names its partitions' folders on
# storage: printed raw, such text could clear the screen and draw a small fake plan where the real one was.
FAKE_PLAN = "\x1b[2J\x1b[HPlan sha256:feed\n  rewrites  1 partition\x1b[8m"
HOSTILE_ID = "sha256:\x9b2J" + "4b8d" * 15
HOSTILE_ITEMS = [
    {**item, "partition": partition}
    for item, partition in zip(
        AWAITING["status"]["plan"]["items"],
        ["region=emea\x1b]0;title\x07\r", "region=z\u00fcri", "region=amer"],
        strict=True,
    )
]
HOSTILE = resource(
    "orders",
    {
        **AWAITING["status"],
        "config": {"expressions": "^region=emea\u2066$,4", "default": 4},
        "plan": {**AWAITING["status"]["plan"], "id": HOSTILE_ID, "items": HOSTILE_ITEMS,
                 "rules": {"expressions": f"^day=\\d+{FAKE_PLAN}$,8;^region=emea$,8", "default": 4}},
        "history": [
            {"planId": HOSTILE_ID, "outcome": "Succeeded\x1b[1A", "finished": "2026-11-24T01:00:00Z",
             "decidedBy": "alice", "reason": "CHG-1\nlooks fine \u202eevil\u202c \x9b2J"},
        ],
    },
)  # fmt: skip


def raw_controls(shown: str) -> list[str]:
    """What a terminal would act on or hide in ``shown``, but the line breaks the views put between lines."""
    return [char for char in shown.replace("\n", "") if not char.isprintable()]


def test_terminal_safe_writes_out_what_a_terminal_acts_on_and_leaves_ordinary_text() -> None:
    assert terminal_safe("\x1b[2J\x1b[H") == r"\x1b[2J\x1b[H"
    assert terminal_safe("a\r\n\t\b\x7fb") == r"a\r\n\t\x08\x7fb"  # C0 and DEL
    assert terminal_safe("\x9b2J\x85") == r"\x9b2J\x85"  # C1: CSI, and NEL, a line break to some
    # Bidi overrides and isolates, zero-width and byte-order marks: they reorder or hide text.
    assert terminal_safe("\u202e\u2066\u200b\ufeff\u2028") == r"\u202e\u2066\u200b\ufeff\u2028"
    # Letters of any script and backslashes are kept: a pattern stays as its author wrote it.
    ordinary = "^region=z\u00fcri/\\d+\\.csv$ \u6771\u4eac"
    assert terminal_safe(ordinary) == ordinary
    assert terminal_safe(terminal_safe(FAKE_PLAN)) == terminal_safe(FAKE_PLAN)  # what it writes is printable


def test_the_plan_writes_out_the_terminal_escapes_in_a_tables_patterns_and_partitions() -> None:
    shown = plan_view(Table.of(HOSTILE))
    assert raw_controls(shown) == []
    # No value breaks a line: the fake plan stays inside the line of the rule that holds it.
    assert len(shown.splitlines()) == len(plan_view(Table.of(AWAITING)).splitlines())
    assert shown.startswith(r"Plan sha256:\x9b2J4b8d")
    assert r"- config  ^region=emea\u2066$,4 default 4" in shown
    assert (r"+ config  ^day=\d+\x1b[2J\x1b[HPlan sha256:feed\n  rewrites  1 partition\x1b[8m$,8;"
            r"^region=emea$,8 default 4") in shown  # fmt: skip
    partitions = [line.split()[1] for line in shown.splitlines() if line.startswith("~ ")]
    assert partitions == [r"region=emea\x1b]0;title\x07\r", "region=z\u00fcri", "region=amer"]


def test_the_list_and_the_history_write_out_the_terminal_escapes_in_a_tables_status() -> None:
    listed = table_list([Table.of(HOSTILE), Table.of(READY)], NOW)
    assert raw_controls(listed) == []
    header, row = listed.splitlines()[0], listed.splitlines()[2]
    assert r"\x9b2J4b8d4b8d4 3 partitions" in row
    assert row.index(" 2h ") + 1 == header.index("WAITING")  # the columns measured on what is printed
    history = history_view(Table.of(HOSTILE))
    assert raw_controls(history) == []
    assert len(history.splitlines()) == 2
    assert r"Succeeded\x1b[1A" in history
    assert history.endswith(r"alice        CHG-1\nlooks fine \u202eevil\u202c \x9b2J")


# --- the commands, through kubectl -------------------------------------------------------------------


@pytest.fixture
def kubectl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A kubectl on PATH that records its arguments and answers `get` with ``answer.json``."""
    script = tmp_path / "kubectl"
    script.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$*" >> {tmp_path}/calls\n'
        'case "$*" in *" get "*|get\\ *) cat ' + f"{tmp_path}/answer.json;; "
        '*"auth whoami"*) printf alice;; '
        f'*" patch "*|patch\\ *) if [ -f {tmp_path}/conflict ]; then cat {tmp_path}/conflict >&2; exit 1; fi;; esac\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    return tmp_path


def answer(kubectl: Path, found: dict[str, Any]) -> None:
    (kubectl / "answer.json").write_text(json.dumps(found))


def calls(kubectl: Path) -> list[str]:
    return (kubectl / "calls").read_text().splitlines()


def test_approve_annotates_the_plan_with_who_and_why_through_the_users_own_kubectl(
    kubectl: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer(kubectl, AWAITING)
    assert plugin.main(["-n", "lake", "--context", "prod", "approve", "orders", "--reason", "CHG-1"]) == 0
    assert capsys.readouterr().out == f"lake/orders: plan {PLAN.id} approved\n"
    whoami, patch = calls(kubectl)[-2:]
    assert whoami.startswith("--namespace=lake --context=prod auth whoami")
    assert patch.startswith("--namespace=lake --context=prod patch hudibuckettables.hudi.bucketops.io orders")
    assert "--field-manager=kubectl-hbt" in patch
    annotations = {APPROVE: PLAN.id, DENY: None, DECIDED_BY: "alice", REASON: "CHG-1"}
    assert json.dumps({"metadata": {"annotations": annotations}}) in patch


def test_approve_applies_to_the_table_as_read_and_to_the_plan_named(
    kubectl: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer(kubectl, {**AWAITING, "metadata": {**AWAITING["metadata"], "resourceVersion": "4711"}})
    short = PLAN.id.removeprefix("sha256:")[:12]  # as the list shows it
    assert plugin.main(["approve", "orders", "--plan", short]) == 0
    assert capsys.readouterr().out == f"lake/orders: plan {PLAN.id} approved\n"
    annotations = {APPROVE: PLAN.id, DENY: None, DECIDED_BY: "alice", REASON: None}
    patch = {"metadata": {"annotations": annotations, "resourceVersion": "4711"}}
    assert json.dumps(patch) in calls(kubectl)[-1]


@pytest.mark.parametrize("named", ["sha256:" + "e" * 64, "eeeeeeeeeeee", PLAN.id[:15]])
def test_approve_refuses_when_the_plan_is_not_the_one_named(
    kubectl: Path, capsys: pytest.CaptureFixture[str], named: str
) -> None:
    """Another plan, or too little of this one's id to be sure (fewer than the 12 digits shown)."""
    answer(kubectl, AWAITING)
    assert plugin.main(["approve", "orders", "--plan", named]) == 1
    said = capsys.readouterr().err
    assert f"lake/orders's plan is now {PLAN.id}, not the plan {named} you named: nothing was decided" in said
    assert not any(" patch " in call for call in calls(kubectl))


def test_a_plan_replaced_between_the_read_and_the_decision_is_not_decided(
    kubectl: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer(kubectl, {**AWAITING, "metadata": {**AWAITING["metadata"], "resourceVersion": "4711"}})
    (kubectl / "conflict").write_text(
        "Error from server (Conflict): Operation cannot be fulfilled on hudibuckettables.hudi.bucketops.io "
        '"orders": the object has been modified; please apply your changes to the latest version and try again'
    )
    assert plugin.main(["deny", "orders"]) == 1
    assert capsys.readouterr().err == (
        f"kubectl hbt: lake/orders changed since its plan {PLAN.id} was read: nothing was decided; read it "
        "again (kubectl hbt plan orders)\n"
    )


def test_deny_annotates_the_plan_and_withdraws_an_approval(
    kubectl: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer(kubectl, AWAITING)
    assert plugin.main(["deny", "orders"]) == 0
    assert capsys.readouterr().out == f"lake/orders: plan {PLAN.id} denied\n"
    annotations = {DENY: PLAN.id, APPROVE: None, DECIDED_BY: "alice", REASON: None}
    assert json.dumps({"metadata": {"annotations": annotations}}) in calls(kubectl)[-1]


@pytest.mark.parametrize(
    ("metadata", "manager"),
    [
        ({"annotations": {"argocd.argoproj.io/tracking-id": "lake:hudi.bucketops.io/HudiBucketTable:lake/orders"}},
         "Argo CD"),
        ({"labels": {"kustomize.toolkit.fluxcd.io/name": "lake"}}, "Flux"),
    ],
)  # fmt: skip
def test_approve_refuses_a_table_kept_in_step_with_git_and_prints_the_line_to_commit(
    kubectl: Path, capsys: pytest.CaptureFixture[str], metadata: dict[str, Any], manager: str
) -> None:
    answer(kubectl, {**AWAITING, "metadata": {**AWAITING["metadata"], **metadata}})
    assert plugin.main(["approve", "orders"]) == 1
    said = capsys.readouterr().err
    assert f"lake/orders is managed by {manager}, which keeps it as Git says" in said
    assert f"spec:\n  apply:\n    approvedPlan: {PLAN.id}" in said
    assert not any(" patch " in call for call in calls(kubectl))


def test_deny_refuses_a_table_kept_in_step_with_git_and_says_how_git_denies_it(
    kubectl: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tracked = {"labels": {"kustomize.toolkit.fluxcd.io/name": "lake"}}
    answer(kubectl, {**AWAITING, "metadata": {**AWAITING["metadata"], **tracked}})
    assert plugin.main(["deny", "orders"]) == 1
    said = capsys.readouterr().err
    assert "lake/orders is managed by Flux, which keeps it as Git says: deny its plan in Git instead" in said
    assert f"spec:\n  apply:\n    policy: Manual\nand no approvedPlan: {PLAN.id}" in said
    assert "approve its plan" not in said  # a denial is never answered with the line that approves
    assert not any(" patch " in call for call in calls(kubectl))


def test_approve_for_git_only_prints_the_line(kubectl: Path, capsys: pytest.CaptureFixture[str]) -> None:
    answer(kubectl, AWAITING)
    assert plugin.main(["approve", "orders", "--git"]) == 0
    assert capsys.readouterr().out.endswith(f"approvedPlan: {PLAN.id}\n")
    assert not any(" patch " in call for call in calls(kubectl))


def test_there_is_nothing_to_approve_without_a_plan_that_changes_something(
    kubectl: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer(kubectl, READY)
    assert plugin.main(["approve", "customers"]) == 1
    assert capsys.readouterr().err == "kubectl hbt: lake/customers has no plan to approve\n"


def test_pause_and_resume_set_and_remove_the_paused_annotation(kubectl: Path) -> None:
    answer(kubectl, READY)
    assert plugin.main(["pause", "customers"]) == 0
    assert plugin.main(["resume", "customers"]) == 0
    pause, resume = (call for call in calls(kubectl) if " patch " in f" {call}")
    assert '{"metadata": {"annotations": {"hudi.bucketops.io/paused": "true"}}}' in pause
    assert '{"metadata": {"annotations": {"hudi.bucketops.io/paused": null}}}' in resume


def test_verify_asks_for_a_layout_check_now(kubectl: Path, capsys: pytest.CaptureFixture[str]) -> None:
    answer(kubectl, READY)
    assert plugin.main(["verify", "customers"]) == 0
    assert "lake/customers: layout check asked for at 20" in capsys.readouterr().out
    patch = json.loads(calls(kubectl)[-1].split("--patch=", 1)[1])
    asked = patch["metadata"]["annotations"][VERIFY]
    assert abs((datetime.fromisoformat(asked) - datetime.now(UTC)).total_seconds()) < 60


def test_retry_starts_a_new_round_with_a_retry_token_it_never_had(
    kubectl: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer(kubectl, READY)
    assert plugin.main(["retry", "customers", "-n", "lake"]) == 0
    assert "lake/customers: retry asked for at 20" in capsys.readouterr().out
    patch = json.loads(calls(kubectl)[-1].split("--patch=", 1)[1])
    asked = patch["metadata"]["annotations"]["hudi.bucketops.io/retry"]
    assert abs((datetime.fromisoformat(asked) - datetime.now(UTC)).total_seconds()) < 60


WAITING_FOR_WINDOW = resource(
    "night",
    {
        "phase": "AwaitingWindow",
        "writers": {"step": "AwaitingWindow", "planId": PLAN.id, "generation": 2, "retryToken": "",
                    "checkRecords": False, "nextWindow": "2026-11-25T01:00:00Z"},
    },
)  # fmt: skip


def test_apply_now_starts_the_plan_waiting_for_its_window_the_one_named_on_the_table_read(
    kubectl: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer(
        kubectl,
        {**WAITING_FOR_WINDOW, "metadata": {**WAITING_FOR_WINDOW["metadata"], "resourceVersion": "7"}},
    )
    assert plugin.main(["apply-now", "night", "--plan", PLAN.id.removeprefix("sha256:")[:12]]) == 0
    assert f"lake/night: plan {PLAN.id} starts now, outside its window" in capsys.readouterr().out
    patch = json.loads(calls(kubectl)[-1].split("--patch=", 1)[1])
    assert patch == {
        "metadata": {"annotations": {"hudi.bucketops.io/apply-now": PLAN.id}, "resourceVersion": "7"}
    }
    assert plugin.main(["apply-now", "night", "--plan", "0" * 12]) == 1
    assert "nothing was started" in capsys.readouterr().err
    answer(kubectl, READY)
    assert plugin.main(["apply-now", "customers"]) == 1
    assert "lake/customers has no approved plan waiting for its window" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["-n", "lake", "--context", "prod", "plan", "orders"],
        ["plan", "orders", "-n", "lake", "--context", "prod"],  # as kubectl's users write them
        ["--context", "prod", "plan", "-n", "lake", "orders"],
        ["-n", "sales", "plan", "orders", "--namespace", "lake", "--context", "prod"],  # the later one wins
    ],
)
def test_kubectls_flags_are_taken_before_or_after_the_verb(
    kubectl: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    answer(kubectl, AWAITING)
    assert plugin.main(argv) == 0
    assert calls(kubectl)[-1].startswith("--namespace=lake --context=prod get hudibuckettables")
    assert f"Plan {PLAN.id}" in capsys.readouterr().out


def test_list_reads_every_namespace_when_asked(kubectl: Path, capsys: pytest.CaptureFixture[str]) -> None:
    answer(kubectl, {"items": [AWAITING, READY]})
    assert plugin.main(["list", "-A"]) == 0
    assert calls(kubectl) == ["get hudibuckettables.hudi.bucketops.io --all-namespaces --output=json"]
    assert "orders" in capsys.readouterr().out


def test_a_kubectl_failure_is_said_as_kubectl_said_it(
    kubectl: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (kubectl / "kubectl").write_text("#!/bin/sh\necho 'Error from server (NotFound): nope' >&2\nexit 1\n")
    assert plugin.main(["plan", "missing"]) == 1
    assert capsys.readouterr().err == "kubectl hbt: Error from server (NotFound): nope\n"


def test_the_commands_print_a_tables_text_and_kubectls_errors_with_their_terminal_escapes_written_out(
    kubectl: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer(kubectl, HOSTILE)
    for command in (["plan", "orders"], ["history", "orders"], ["list"], ["approve", "orders"]):
        assert plugin.main(command) == 0
        assert raw_controls(capsys.readouterr().out) == []
    patch = json.loads(calls(kubectl)[-1].split("--patch=", 1)[1])
    assert patch["metadata"]["annotations"][APPROVE] == HOSTILE_ID  # approved as it is, only printed escaped
    # kubectl's errors can quote what a table holds: each of their lines is written out the same way.
    (kubectl / "kubectl").write_text("#!/bin/sh\nprintf 'Error: \"a\\033[2J\"\\nsee above\\n' >&2\nexit 1\n")
    assert plugin.main(["plan", "orders"]) == 1
    assert capsys.readouterr().err == 'kubectl hbt: Error: "a\\x1b[2J"\nsee above\n'


def test_list_prints_what_kubectl_would_with_its_output_flags(
    kubectl: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = {"apiVersion": "v1", "kind": "List", "items": [AWAITING, READY]}
    answer(kubectl, found)
    assert plugin.main(["list", "-o", "json", "-n", "lake"]) == 0
    assert json.loads(capsys.readouterr().out) == found
    assert plugin.main(["list", "-o", "yaml"]) == 0
    assert yaml.safe_load(capsys.readouterr().out) == found
    assert plugin.main(["list", "-o", "name"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "hudibuckettable.hudi.bucketops.io/orders",
        "hudibuckettable.hudi.bucketops.io/customers",
    ]
    assert plugin.main(["list", "--no-headers"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert [row.split()[:3] for row in rows] == [
        ["lake", "customers", "Ready"],
        ["lake", "orders", "AwaitingApproval"],
    ]
    assert plugin.main(["list", "-o", "wide", "--no-headers"]) == 0
    wide = [row.split()[-2:] for row in capsys.readouterr().out.splitlines()]
    assert wide == [["-", "-"], ["AwaitingApproval", "-"]]  # the Ready condition's reason


def test_plan_and_history_print_the_status_they_show_as_json_or_yaml(
    kubectl: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer(kubectl, AWAITING)
    assert plugin.main(["plan", "orders", "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == AWAITING["status"]["plan"]
    answer(kubectl, READY)
    assert plugin.main(["history", "customers", "-o", "yaml"]) == 0
    assert yaml.safe_load(capsys.readouterr().out) == READY["status"]["history"]


def test_json_and_yaml_output_write_out_what_a_terminal_obeys() -> None:
    table = {**AWAITING, "metadata": {**AWAITING["metadata"], "annotations": {REASON: "ok \x1b[2J \u202e"}}}
    for output in ("json", "yaml"):
        printed = plugin._printed(table, output)
        assert "\x1b" not in printed
        assert "\u202e" not in printed
