"""Names, labels and annotations of a HudiBucketTable's children (SparkApplications, report ConfigMaps).

A child's name is a pure function of what the job is for (table uid, generation, job kind, retry token,
plan id), so after a restart the operator finds the child it would create instead of starting a second
job. Names stay well under 63 characters: Spark on Kubernetes derives pod and Service names from the
application name (``<name>-driver``, ``<name>-ui-svc``, ...), and a Service name must be a DNS-1035
label (at most 63 characters, starting with a letter).

Children never carry the table's own labels: Argo CD prunes objects that carry its tracking label but
are not in Git.
"""

from __future__ import annotations

import hashlib
import json
import re

from hudi_bucket_operator.resource.api import GROUP

MAX_NAME_LENGTH = 49  # the name plus Spark's suffixes (-driver, -ui-svc, -exec-N) must fit in 63
HASH_LENGTH = 10
MAX_KIND_LENGTH = 8  # plan, apply, verify
# One budget for every kind, so that all of a table's children share one prefix (job_prefix).
PREFIX_LENGTH = MAX_NAME_LENGTH - MAX_KIND_LENGTH - HASH_LENGTH - 2
MAX_LABEL_VALUE = 63

MANAGED_BY = "app.kubernetes.io/managed-by"
OPERATOR = "hudi-bucket-operator"
TABLE_LABEL = f"{GROUP}/table"
TABLE_UID_LABEL = f"{GROUP}/table-uid"
JOB_KIND_LABEL = f"{GROUP}/job-kind"
GENERATION_LABEL = f"{GROUP}/generation"

TABLE_NAME_ANNOTATION = f"{GROUP}/table-name"  # the full name: the label may be shortened
PLAN_ID_ANNOTATION = f"{GROUP}/plan-id"  # plan ids hold ':', which a label value cannot
RETRY_TOKEN_ANNOTATION = f"{GROUP}/retry-token"

_NOT_DNS = re.compile(r"[^a-z0-9-]+")
_NOT_LABEL = re.compile(r"[^A-Za-z0-9_.-]+")


def _digest(*parts: str) -> str:
    # JSON keeps the parts apart: ("a", "bc") and ("ab", "c") hash differently.
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def job_name(
    table_name: str, table_uid: str, kind: str, generation: int, retry_token: str = "", plan_id: str = ""
) -> str:
    """``<table-name-prefix>-<kind>-<hash>``: a DNS-1035 label of at most MAX_NAME_LENGTH characters.

    The hash covers everything that makes a run distinct, so a new generation, a retry or another
    approved plan gets a new child; the prefix is only there for people reading ``kubectl get``.
    """
    short_kind = _NOT_DNS.sub("-", kind.lower()).strip("-")[:MAX_KIND_LENGTH].strip("-") or "job"
    digest = _digest(table_uid, str(generation), kind, retry_token, plan_id)[:HASH_LENGTH]
    return f"{job_prefix(table_name)}{short_kind}-{digest}"


def job_prefix(table_name: str) -> str:
    """How every child name of this table starts (ending in ``-``).

    Only a hint for people and listings: a longer table name can share it, so find a table's
    children by the table-uid label (children_selector), not by prefix.
    """
    prefix = _NOT_DNS.sub("-", table_name.lower()).strip("-")
    if not prefix[:1].isalpha():  # a Service name must start with a letter
        prefix = f"t-{prefix}".rstrip("-")
    return prefix[:PREFIX_LENGTH].rstrip("-") + "-"


def label_value(value: str) -> str:
    """``value`` as a valid label value; a longer or odd one is shortened and made unique by a hash."""
    clean = _NOT_LABEL.sub("-", value).strip("-_.")
    if clean == value and len(value) <= MAX_LABEL_VALUE:
        return value
    digest = _digest(value)[:HASH_LENGTH]
    head = clean[: MAX_LABEL_VALUE - HASH_LENGTH - 1].rstrip("-_.")
    return f"{head}-{digest}" if head else digest


def child_labels(table_name: str, table_uid: str, kind: str, generation: int) -> dict[str, str]:
    """Labels that let the operator list a table's children and tell one job from another."""
    return {
        MANAGED_BY: OPERATOR,
        TABLE_LABEL: label_value(table_name),
        TABLE_UID_LABEL: label_value(table_uid),
        JOB_KIND_LABEL: label_value(kind),
        GENERATION_LABEL: str(generation),
    }


def child_annotations(table_name: str, plan_id: str = "", retry_token: str = "") -> dict[str, str]:
    """What labels cannot hold in full: the table name, the plan id, the retry token."""
    annotations = {TABLE_NAME_ANNOTATION: table_name}
    if plan_id:
        annotations[PLAN_ID_ANNOTATION] = plan_id
    if retry_token:
        annotations[RETRY_TOKEN_ANNOTATION] = retry_token
    return annotations


def children_selector(table_uid: str) -> dict[str, str]:
    """The label selector matching every child of one table (by uid: a re-created table is another)."""
    return {MANAGED_BY: OPERATOR, TABLE_UID_LABEL: label_value(table_uid)}
