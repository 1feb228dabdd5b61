"""The node's kubelet: its configuration file, with every folder it would take by default moved into
the run folder, and its identity (``system:node:<name>`` in ``system:nodes``, what the Node authorizer
and NodeRestriction admission expect)."""

from __future__ import annotations

from pathlib import Path

import yaml

from control_plane import ControlPlane

from .cluster_dns import DOMAIN
from .host import CGROUP_NAME

# Registered with the node: the scheduler places only pods that tolerate it, so the pods other e2e tests
# leave behind (the chart's Deployment, whose image no registry here serves) stay Pending as before.
TAINT = {"key": "hudi-bucket-operator.test/node", "effect": "NoSchedule"}


class Kubelet:
    def __init__(
        self, run_dir: Path, node_name: str, node_ip: str, runtime_endpoint: str, healthz_port: int
    ) -> None:
        self.dir = run_dir / "kubelet"
        self.node_name = node_name
        self.node_ip = node_ip
        self.runtime_endpoint = runtime_endpoint
        self.healthz_port = healthz_port
        self.pod_logs = self.dir / "pod-logs"

    def prepare(self, control_plane: ControlPlane) -> list[str]:
        """Writes its credentials and configuration; returns its command line."""
        user = f"system:node:{self.node_name}"
        kubeconfig = control_plane.kubeconfig_for_user(self.dir / "pki", user, ("system:nodes",))
        config = self.dir / "config.yaml"
        config.write_text(yaml.safe_dump(self._config(control_plane.pki.ca.cert), sort_keys=False))
        return [
            f"--config={config}",
            f"--kubeconfig={kubeconfig}",
            f"--root-dir={self.dir / 'root'}",
            f"--cert-dir={self.dir / 'pki'}",
            f"--hostname-override={self.node_name}",
            f"--node-ip={self.node_ip}",
        ]

    def _config(self, client_ca: Path) -> dict[str, object]:
        return {
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            # This machine's cgroups are v1 (hybrid): kubelet 1.35+ refuses them unless told.
            "failCgroupV1": False,
            "cgroupDriver": "cgroupfs",
            "cgroupRoot": f"/{CGROUP_NAME}",  # the pods' cgroups under ours, found and removed by name
            "containerRuntimeEndpoint": self.runtime_endpoint,
            # Served on the node's own IP only; the API server's admin may use it, nobody anonymous.
            "address": self.node_ip,
            "readOnlyPort": 0,
            "healthzBindAddress": "127.0.0.1",
            "healthzPort": self.healthz_port,
            "authentication": {
                "anonymous": {"enabled": False},
                "webhook": {"enabled": False},
                "x509": {"clientCAFile": str(client_ca)},
            },
            "authorization": {"mode": "AlwaysAllow"},
            "podLogsDir": str(self.pod_logs),
            # The cluster DNS (cluster_dns.py) serves on the node's own address.
            "clusterDNS": [self.node_ip],
            "clusterDomain": DOMAIN,
            "volumePluginDir": str(self.dir / "volume-plugins"),
            "makeIPTablesUtilChains": False,  # kube-proxy's rules are nftables; kubelet needs none
            "hairpinMode": "none",
            "failSwapOn": False,
            # A test machine's disk is shared and often full-ish: neither evict pods nor delete images.
            "evictionHard": {
                "memory.available": "100Mi",
                "nodefs.available": "1%",
                "imagefs.available": "1%",
            },
            "imageGCHighThresholdPercent": 100,
            "serializeImagePulls": False,
            "nodeStatusUpdateFrequency": "2s",
            "registerWithTaints": [TAINT],
        }
