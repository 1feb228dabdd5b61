"""The writers through the API: what is read of them (their owner's consent first), and the one patch each
pause or resume is."""

from __future__ import annotations

from typing import Any

import pytest

from hudi_bucket_operator.errors import KubeNotFoundError
from hudi_bucket_operator.policy.writer_policy import WriterPolicy
from hudi_bucket_operator.resource.spec import parse_spec
from hudi_bucket_operator.resource.writers import (
    ObservedWriter,
    SuspendField,
    WriterAction,
    WriterKind,
    WriterVerb,
)
from hudi_bucket_operator.runtime import kube, workloads

pytestmark = pytest.mark.asyncio

FLINK = {"kind": "FlinkDeployment", "name": "cdc"}
POLICY = WriterPolicy(
    enabled=True,
    kinds=(
        WriterKind(
            "flink.apache.org/v1beta1",
            "FlinkDeployment",
            "flinkdeployments",
            SuspendField("spec.job.state", "suspended", "status.jobStatus.state", ("SUSPENDED",)),
        ),
    ),
)
CONSENT = {"labels": {"hudi.bucketops.io/writer-of": "orders"}}
SPEC = {
    "table": {"uri": "s3a://x"},
    "buckets": {"default": 4, "rules": [{"pattern": "x", "buckets": 8}]},
    "writers": {
        "workloads": [
            {"kind": "Deployment", "name": "ingest"},
            {"kind": "StatefulSet", "name": "gone"},
            FLINK,
        ]
    },
}


class FakeClient:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    async def get(
        self, resource: kube.Resource, namespace: str, name: str, subresource: str = ""
    ) -> dict[str, Any]:
        self.calls.append(("get", resource.path(namespace, name, subresource)))
        if name == "gone":
            raise KubeNotFoundError(404, "not found")
        if subresource == "scale":
            return {"spec": {"replicas": 0}, "status": {"replicas": 0, "selector": "app=ingest"}}
        if name == "ingest":
            return {"metadata": CONSENT, "spec": {"replicas": 0}}
        if name == "other":  # nobody said it writes the table
            return {"metadata": {"labels": {"app": "other"}}, "spec": {"replicas": 1}}
        return {
            "metadata": {"annotations": {"hudi.bucketops.io/writer-of": "customers,orders"}},
            "spec": {"job": {"state": "suspended"}},
            "status": {"jobStatus": {"state": "SUSPENDED"}},
        }

    async def count_pods(self, namespace: str, selector: str) -> int:
        self.calls.append(("pods", namespace, selector))
        return 1  # one still terminating

    async def merge_patch(
        self, resource: kube.Resource, namespace: str, name: str, patch: dict[str, Any], subresource: str = ""
    ) -> None:
        self.calls.append(("patch", resource.path(namespace, name, subresource), patch))


async def test_writers_are_read_whole_for_consent_then_by_scale_and_pods_or_by_their_suspend_field() -> None:
    client = FakeClient()
    writers = POLICY.resolve(parse_spec(SPEC).writer_refs).workloads
    seen = await workloads.observe(client, "lake", "orders", writers)  # type: ignore[arg-type]
    assert seen == {
        "Deployment/ingest": ObservedWriter(replicas=0, pods=1),
        "StatefulSet/gone": ObservedWriter(found=False),
        "FlinkDeployment/cdc": ObservedWriter(value="suspended", stopped=True),
    }
    assert ("pods", "lake", "app=ingest") in client.calls
    assert ("get", "/apis/apps/v1/namespaces/lake/deployments/ingest") in client.calls
    assert ("get", "/apis/apps/v1/namespaces/lake/deployments/ingest/scale") in client.calls
    assert ("get", "/apis/flink.apache.org/v1beta1/namespaces/lake/flinkdeployments/cdc") in client.calls


async def test_a_workload_that_names_another_table_or_none_does_not_consent() -> None:
    client = FakeClient()
    refs = parse_spec({**SPEC, "writers": {"workloads": [{"kind": "Deployment", "name": "other"}, FLINK]}})
    writers = POLICY.resolve(refs.writer_refs).workloads
    seen = await workloads.observe(client, "lake", "customers-archive", writers)  # type: ignore[arg-type]
    assert (seen["Deployment/other"].consents, seen["FlinkDeployment/cdc"].consents) == (False, False)
    seen = await workloads.observe(client, "lake", "customers", writers)  # type: ignore[arg-type]
    assert (seen["Deployment/other"].consents, seen["FlinkDeployment/cdc"].consents) == (False, True)


async def test_a_pause_or_resume_is_one_merge_patch() -> None:
    client = FakeClient()
    actions = [
        WriterAction(WriterVerb.PAUSE, "apps/v1", "StatefulSet", "statefulsets", "db", replicas=0),
        WriterAction(WriterVerb.RESUME, "flink.apache.org/v1beta1", "FlinkDeployment", "flinkdeployments", "cdc",
                     path="spec.job.state", value="running"),
    ]  # fmt: skip
    await workloads.perform(client, "lake", actions)  # type: ignore[arg-type]
    assert client.calls == [
        ("patch", "/apis/apps/v1/namespaces/lake/statefulsets/db/scale", {"spec": {"replicas": 0}}),
        ("patch", "/apis/flink.apache.org/v1beta1/namespaces/lake/flinkdeployments/cdc",
         {"spec": {"job": {"state": "running"}}}),
    ]  # fmt: skip
