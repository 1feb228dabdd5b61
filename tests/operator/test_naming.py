"""Child names are short DNS-1035 labels, stable for the same job and distinct for another."""

from __future__ import annotations

import itertools
import re

import pytest

from hudi_bucket_operator.resource import naming

UID = "6f1c2a9e-3b7d-4c1e-9a55-0d2f8e7b1c40"
DNS_1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")

ODD_NAMES = [
    "orders",
    "a",
    "orders.eu-west.2026",
    "2026-orders",
    "9",
    "x" * 253,
    "a." * 120 + "b",
    "Orders_With_Caps",  # not a valid object name, but nothing downstream may break on it
    "-.-",
    "",
]


@pytest.mark.parametrize("table", ODD_NAMES)
@pytest.mark.parametrize("kind", ["plan", "apply", "verify"])
def test_names_are_short_dns_labels_that_start_with_a_letter(table: str, kind: str) -> None:
    name = naming.job_name(table, UID, kind, 7, retry_token="r1", plan_id="sha256:" + "f" * 64)
    assert len(name) < 50
    assert DNS_1035.fullmatch(name), name
    assert f"-{kind}-" in name
    assert name.startswith(naming.job_prefix(table))
    assert len(name) + len("-ui-svc") <= 63


def test_the_name_reads_as_table_kind_hash() -> None:
    name = naming.job_name("orders", UID, "plan", 3)
    assert re.fullmatch(r"orders-plan-[0-9a-f]{10}", name)


def test_names_are_deterministic() -> None:
    args = ("orders", UID, "apply", 4, "retry-2", "sha256:abc")
    assert naming.job_name(*args) == naming.job_name(*args)


def test_each_input_makes_a_different_name() -> None:
    variants = {
        "uid": ("orders", "other-uid", "plan", 3, "", ""),
        "generation": ("orders", UID, "plan", 4, "", ""),
        "kind": ("orders", UID, "verify", 3, "", ""),
        "retry": ("orders", UID, "plan", 3, "1", ""),
        "plan": ("orders", UID, "plan", 3, "", "sha256:abc"),
    }
    base = naming.job_name("orders", UID, "plan", 3)
    names = {what: naming.job_name(*args) for what, args in variants.items()}
    assert base not in names.values()
    assert len(set(names.values())) == len(names)


def test_parts_do_not_run_into_each_other() -> None:
    # ("ab", "c") and ("a", "bc") must not hash alike.
    assert naming.job_name("t", UID, "plan", 1, "ab", "c") != naming.job_name("t", UID, "plan", 1, "a", "bc")


def test_many_jobs_never_collide() -> None:
    names = {
        naming.job_name("orders", uid, kind, generation, retry)
        for uid, kind, generation, retry in itertools.product(
            [UID, "u2", "u3"], ["plan", "apply", "verify"], range(30), ["", "1", "2"]
        )
    }
    assert len(names) == 3 * 3 * 30 * 3


def test_long_names_share_a_prefix_across_kinds() -> None:
    table = "a-very-long-table-name-that-goes-on-and-on"
    prefixes = {naming.job_name(table, UID, kind, 1)[: -len(f"{kind}-") - 10] for kind in ("plan", "verify")}
    assert prefixes == {naming.job_prefix(table)}


@pytest.mark.parametrize("table", ODD_NAMES)
def test_labels_are_valid_label_values(table: str) -> None:
    labels = naming.child_labels(table, UID, "apply", 12)
    for key, value in labels.items():
        assert len(value) <= 63, key
        assert LABEL_VALUE.fullmatch(value), (key, value)
    assert labels[naming.MANAGED_BY] == "hudi-bucket-operator"
    assert labels[naming.TABLE_UID_LABEL] == UID
    assert labels[naming.JOB_KIND_LABEL] == "apply"
    assert labels[naming.GENERATION_LABEL] == "12"


def test_a_short_table_name_is_its_own_label() -> None:
    assert naming.child_labels("orders.eu", UID, "plan", 1)[naming.TABLE_LABEL] == "orders.eu"


def test_long_label_values_are_shortened_but_stay_distinct() -> None:
    a, b = "x" * 100 + "a", "x" * 100 + "b"
    assert naming.label_value(a) != naming.label_value(b)
    assert naming.label_value(a).startswith("x" * 40)
    assert naming.label_value(a) == naming.label_value(a)


def test_annotations_carry_what_labels_cannot() -> None:
    table = "t" * 200
    annotations = naming.child_annotations(table, plan_id="sha256:abc", retry_token="2")
    assert annotations == {
        naming.TABLE_NAME_ANNOTATION: table,
        naming.PLAN_ID_ANNOTATION: "sha256:abc",
        naming.RETRY_TOKEN_ANNOTATION: "2",
    }
    assert naming.child_annotations("orders") == {naming.TABLE_NAME_ANNOTATION: "orders"}


def test_the_selector_matches_the_labels() -> None:
    selector = naming.children_selector(UID)
    labels = naming.child_labels("orders", UID, "plan", 1)
    assert selector.items() <= labels.items()


def test_no_table_label_of_ours_is_argo_cds() -> None:
    labels = naming.child_labels("orders", UID, "plan", 1)
    assert not any(
        key.startswith("argocd.argoproj.io") or key == "app.kubernetes.io/instance" for key in labels
    )
