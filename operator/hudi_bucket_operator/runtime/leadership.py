"""Leader election on a Lease (coordination.k8s.io/v1), as client-go's leaderelection holds one.

Every replica runs Kopf, watches the tables and serves its probes and metrics; only the holder of the
Lease reconciles. A candidate takes the Lease when it is free, released, or unchanged for its whole
duration as this replica's own clock measures it (so the replicas' clocks need not agree); the holder
renews it every few seconds, and a holder that cannot renew within the renew deadline (two thirds of
the duration) has lost it: it stops at once, before another replica may take the Lease (see
``Election.run``). A holder that stops cleanly releases the Lease, and the next replica takes it within
a retry period instead of a whole duration: a rolling upgrade hands over in seconds.

``next_step`` is the decision, pure; ``Election`` the loop that asks the API.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hudi_bucket_operator.errors import KubeError, KubeNotFoundError
from hudi_bucket_operator.runtime import kube

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LeaseRecord:
    """What a Lease says: who holds it, for how long, and its version (each write changes it)."""

    holder: str
    duration_seconds: int
    transitions: int
    version: str

    @classmethod
    def of(cls, lease: dict[str, Any]) -> LeaseRecord:
        spec = lease.get("spec") or {}
        return cls(
            holder=spec.get("holderIdentity") or "",
            duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            transitions=int(spec.get("leaseTransitions") or 0),
            version=str(lease["metadata"].get("resourceVersion", "")),
        )


class Step(enum.Enum):
    CREATE = "create"  # no Lease yet
    RENEW = "renew"  # ours
    TAKE = "take"  # free, released or expired
    WAIT = "wait"  # another's, and alive


def next_step(record: LeaseRecord | None, me: str, unchanged_for: float) -> Step:
    """What a candidate does with the Lease as read: ``unchanged_for`` is how long, by this replica's
    clock, the Lease has shown the same version."""
    if record is None:
        return Step.CREATE
    if record.holder == me:
        return Step.RENEW
    if not record.holder or unchanged_for >= record.duration_seconds:
        return Step.TAKE
    return Step.WAIT


@dataclass(frozen=True)
class Timing:
    """The Lease's duration and what follows from it, in client-go's proportions (15 s, 10 s, 2 s)."""

    lease_seconds: int = 15

    @property
    def renew_deadline(self) -> float:
        return self.lease_seconds * 2 / 3

    @property
    def retry_period(self) -> float:
        return self.lease_seconds / 7.5


def identity(hostname: str) -> str:
    """This process's name in the Lease: its pod's, and a part of its own (a restarted container is a
    new candidate, not the holder it was)."""
    return f"{hostname}_{uuid.uuid4().hex[:8]}"


_LEASE = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease"}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # a MicroTime


class Election:
    """One replica's campaign for the Lease ``namespace/name``."""

    def __init__(
        self, client: kube.KubeClient, namespace: str, name: str, me: str, timing: Timing = Timing()
    ) -> None:
        self.namespace, self.name, self.me, self.timing = namespace, name, me, timing
        self._client = client
        self.leading = asyncio.Event()
        self._seen: tuple[str, float] = ("", 0.0)  # the version last read, and since when (monotonic)
        self._renewed = 0.0  # when we last wrote the Lease as ours (monotonic)

    async def run(self, won: Callable[[], None], lost: Callable[[], None]) -> None:
        """Campaign until cancelled: call ``won`` on taking the Lease, and ``lost`` when it cannot be
        renewed in time (``lost`` must stop this replica's work at once: another replica may take the
        Lease a third of its duration later)."""
        await self._client.logged_in.wait()
        while True:
            leading = self.leading.is_set()
            try:
                await self._round()
            except KubeError as err:  # the API failed us: try again; a holder's deadline runs on
                log.warning("leader election: %s", err)
            if self.leading.is_set() and time.monotonic() - self._renewed > self.timing.renew_deadline:
                log.error(
                    "leader election: Lease %s/%s not renewed in time: stopping", self.namespace, self.name
                )
                self.leading.clear()
                lost()
                return
            if self.leading.is_set() and not leading:
                won()
            await asyncio.sleep(self.timing.retry_period)

    async def _round(self) -> None:
        try:
            lease = await self._client.get(kube.LEASES, self.namespace, self.name)
        except KubeNotFoundError:
            lease = None
        now = time.monotonic()
        record = None if lease is None else LeaseRecord.of(lease)
        if record is not None and record.version != self._seen[0]:
            self._seen = (record.version, now)
        step = next_step(record, self.me, now - self._seen[1])
        if step is Step.WAIT:
            return
        ours = {
            "holderIdentity": self.me,
            "leaseDurationSeconds": self.timing.lease_seconds,
            "renewTime": _now(),
        }
        if lease is None or record is None:  # Step.CREATE; a 409: another candidate was first
            metadata = {"name": self.name, "namespace": self.namespace}
            spec = {**ours, "acquireTime": ours["renewTime"], "leaseTransitions": 0}
            await self._client.create(kube.LEASES, {**_LEASE, "metadata": metadata, "spec": spec})
        else:  # renewed, or taken (a 409: another candidate was first)
            taken = {"acquireTime": ours["renewTime"], "leaseTransitions": record.transitions + 1}
            lease["spec"] = {**lease["spec"], **ours, **(taken if step is Step.TAKE else {})}
            await self._client.replace(kube.LEASES, lease)
        self._renewed = now
        if not self.leading.is_set():
            log.info("leader election: leading as %s (Lease %s/%s)", self.me, self.namespace, self.name)
            self.leading.set()

    async def release(self) -> None:
        """Let the next replica take the Lease now (a clean stop): no holder, a one-second duration."""
        if not self.leading.is_set():
            return
        self.leading.clear()
        try:
            lease = await self._client.get(kube.LEASES, self.namespace, self.name)
            if LeaseRecord.of(lease).holder == self.me:
                lease["spec"] = {**lease["spec"], "holderIdentity": None, "leaseDurationSeconds": 1}
                await self._client.replace(kube.LEASES, lease)
        except KubeError as err:  # it expires on its own
            log.warning("leader election: could not release the Lease: %s", err)
