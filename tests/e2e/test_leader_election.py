"""Leader election (leadership.Election) on a real API server, with only the rights the chart grants:
create on Leases, get and update on the one Lease."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime
from pathlib import Path

from kubernetes.aio import client as aio_client
from kubernetes.aio import config as aio_config

from control_plane import ControlPlane
from hudi_bucket_operator.runtime import kube
from hudi_bucket_operator.runtime.leadership import Election, LeaseRecord, Timing

LEASE = "hudi-bucket-operator"
TIMING = Timing(3)  # a 2 s renew deadline, a 0.4 s retry period


def candidate_kubeconfig(control_plane: ControlPlane, namespace: str, folder: Path) -> Path:
    control_plane.kubectl("create", "serviceaccount", "operator", "-n", namespace)
    control_plane.kubectl(
        "create", "role", "lease-create", "-n", namespace, "--verb=create", "--resource=leases"
    )
    control_plane.kubectl(
        "create", "role", "lease", "-n", namespace, "--verb=get,update", "--resource=leases",
        f"--resource-name={LEASE}",
    )  # fmt: skip
    for role in ("lease-create", "lease"):
        control_plane.kubectl(
            "create", "rolebinding", role, "-n", namespace, f"--role={role}",
            f"--serviceaccount={namespace}:operator",
        )  # fmt: skip
    user = f"system:serviceaccount:{namespace}:operator"
    control_plane.wait_until_allowed(user, "update", f"leases.coordination.k8s.io/{LEASE}", namespace)
    token = control_plane.token_for(namespace, "operator")
    return control_plane.kubeconfig_for_token(token, folder / "operator.kubeconfig")


async def client_for(kubeconfig: Path) -> kube.KubeClient:
    configuration = aio_client.Configuration()
    await aio_config.load_kube_config(str(kubeconfig), client_configuration=configuration)
    api = kube.KubeClient()
    await api.log_in(configuration)
    return api


async def leads_within(election: Election, seconds: float) -> float:
    started = time.monotonic()
    await asyncio.wait_for(election.leading.wait(), seconds)
    return time.monotonic() - started


def test_one_replica_leads_a_dead_leaders_lease_is_taken_after_its_duration_a_released_one_at_once(
    control_plane: ControlPlane, namespace: str, tmp_path: Path
) -> None:
    kubeconfig = candidate_kubeconfig(control_plane, namespace, tmp_path)
    lost: list[str] = []

    async def scenario() -> None:
        api = await client_for(kubeconfig)
        first, second, third = (Election(api, namespace, LEASE, me, TIMING) for me in ("a_1", "b_2", "c_3"))
        campaigns = [asyncio.create_task(first.run(won=lambda: None, lost=lambda: lost.append("a")))]
        try:
            await leads_within(first, 5)
            campaigns.append(asyncio.create_task(second.run(won=lambda: None, lost=lambda: lost.append("b"))))
            await asyncio.sleep(2 * TIMING.lease_seconds)
            assert not second.leading.is_set()  # the first renews: the second stands by

            campaigns[0].cancel()  # the leader dies: no release, its Lease stops being renewed
            waited = await leads_within(second, 3 * TIMING.lease_seconds)
            assert waited >= TIMING.lease_seconds - TIMING.retry_period * 2
            record = LeaseRecord.of(await api.get(kube.LEASES, namespace, LEASE))
            assert (record.holder, record.transitions) == ("b_2", 1)

            campaigns.append(asyncio.create_task(third.run(won=lambda: None, lost=lambda: lost.append("c"))))
            await asyncio.sleep(TIMING.retry_period * 2)
            campaigns[1].cancel()
            await second.release()  # a clean stop: the next one takes over within a retry or two
            assert await leads_within(third, 3 * TIMING.retry_period) < TIMING.lease_seconds
            assert lost == []
        finally:
            for campaign in campaigns:
                campaign.cancel()
            await api.close()

    asyncio.run(scenario())


def test_a_leader_that_cannot_renew_stops_before_another_may_take_its_lease(
    control_plane: ControlPlane, namespace: str, tmp_path: Path
) -> None:
    kubeconfig = candidate_kubeconfig(control_plane, namespace, tmp_path)

    async def scenario() -> None:
        api = await client_for(kubeconfig)
        leader = Election(api, namespace, LEASE, "a_1", TIMING)
        lost = asyncio.Event()
        campaign = asyncio.create_task(leader.run(won=lambda: None, lost=lost.set))
        try:
            await leads_within(leader, 5)
            # Its rights taken away (as a partitioned node's API calls fail): it cannot renew.
            control_plane.kubectl("delete", "rolebinding", "lease", "-n", namespace)
            await asyncio.wait_for(lost.wait(), 3 * TIMING.lease_seconds)
            stopped = datetime.now(UTC)
            renewed = json.loads(
                control_plane.kubectl("get", "lease", LEASE, "-n", namespace, "-o", "json").stdout
            )
            last = datetime.fromisoformat(renewed["spec"]["renewTime"])
            assert (stopped - last).total_seconds() < TIMING.lease_seconds  # before another may take it
            assert not leader.leading.is_set()
            assert campaign.done()  # it campaigns no more: its process exits
        finally:
            campaign.cancel()
            await api.close()

    asyncio.run(scenario())
