"""The node's cluster DNS: what CoreDNS's ``kubernetes`` plugin answers, for the names pods here ask for.

``<service>.<namespace>.svc.cluster.local`` is the Service's ClusterIP, or, for a headless Service (as
the one Spark makes for its driver, which the executors dial), the addresses of its ready endpoints
(EndpointSlices). Every other name is NXDOMAIN: pods here reach nothing outside the cluster by name.
The kubelet names this server in each pod's resolv.conf (``clusterDNS``), with the search path that lets
``kubernetes.default.svc`` and ``<service>.<namespace>.svc`` resolve as in any cluster.

Served by dnslib (UDP, from a thread of the test process), answering from the API server on each query:
short TTLs, nothing cached, so a Service created a moment ago resolves.
"""

from __future__ import annotations

import ipaddress
import logging

from dnslib import QTYPE, RCODE, RR, A, DNSRecord
from dnslib.server import BaseResolver, DNSHandler, DNSLogger, DNSServer
from kubernetes import client

from control_plane import ControlPlane

DOMAIN = "cluster.local"
TTL_SECONDS = 5
log = logging.getLogger(__name__)


class _FromTheApiServer(BaseResolver):
    def __init__(self, control_plane: ControlPlane) -> None:
        self._core = client.CoreV1Api(control_plane.api_client())
        self._discovery = client.DiscoveryV1Api(control_plane.api_client())

    def resolve(self, request: DNSRecord, handler: DNSHandler) -> DNSRecord:
        reply = request.reply()
        name = str(request.q.qname).rstrip(".")
        try:
            addresses = self.addresses(name)
        except Exception:  # the API server unreachable, say: SERVFAIL, as CoreDNS without its cache
            log.exception("cluster DNS could not answer %s", name)
            reply.header.rcode = RCODE.SERVFAIL
            return reply
        if addresses is None:
            reply.header.rcode = RCODE.NXDOMAIN
        elif request.q.qtype in (QTYPE.A, QTYPE.ANY):  # AAAA and the rest: the name exists, with no data
            for address in addresses:
                reply.add_answer(RR(request.q.qname, QTYPE.A, rdata=A(address), ttl=TTL_SECONDS))
        return reply

    def addresses(self, name: str) -> list[str] | None:
        """The IPv4 addresses of a Service's name; None when there is no such name."""
        labels = name.split(".")
        if len(labels) != 5 or ".".join(labels[2:]) != f"svc.{DOMAIN}":
            return None
        service_name, namespace = labels[:2]
        try:
            service = self._core.read_namespaced_service(service_name, namespace, _request_timeout=2)
        except client.ApiException as err:
            if err.status == 404:
                return None
            raise
        if service.spec.cluster_ip and service.spec.cluster_ip != "None":
            return [service.spec.cluster_ip]
        slices = self._discovery.list_namespaced_endpoint_slice(
            namespace, label_selector=f"kubernetes.io/service-name={service_name}", _request_timeout=2
        )
        return [
            address
            for endpoint_slice in slices.items
            for endpoint in endpoint_slice.endpoints or []
            if endpoint.conditions is None or endpoint.conditions.ready is not False
            for address in endpoint.addresses
            if ipaddress.ip_address(address).version == 4
        ]


class ClusterDns:
    """Serves on ``address`` port 53 from ``start()`` to ``stop()``."""

    def __init__(self, control_plane: ControlPlane, address: str) -> None:
        self.address = address
        quiet = DNSLogger("-request,-reply,-truncated,+error", prefix=False, logf=log.warning)
        self._server = DNSServer(_FromTheApiServer(control_plane), address=address, port=53, logger=quiet)

    def start(self) -> None:
        self._server.start_thread()

    def stop(self) -> None:
        self._server.stop()
        self._server.server.server_close()
