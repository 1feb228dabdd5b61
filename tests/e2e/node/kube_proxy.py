"""The node's kube-proxy, in nftables mode: it serves the Services' ClusterIPs (the `kubernetes` Service's,
which in-cluster clients dial, included) with rules in nftables tables of its own (``kube-proxy`` in the
ip and ip6 families), which ``kube-proxy --cleanup`` deletes (host.py runs it when the node is put back).

It leaves the conntrack sysctls as they are (zero settings), and listens on loopback only.
"""

from __future__ import annotations

import urllib.request
from pathlib import Path

import yaml

from control_plane import ControlPlane

USER = "system:kube-proxy"  # bound to system:node-proxier by the bootstrap RBAC


class KubeProxy:
    def __init__(self, run_dir: Path, node_name: str, node_ip: str, pod_subnet: str) -> None:
        self.dir = run_dir / "kube-proxy"
        self.node_name = node_name
        self.node_ip = node_ip
        self.pod_subnet = pod_subnet
        # On loopback, free ones chosen by the node (0 would not mean "any" here).
        self.healthz_port = 0
        self.metrics_port = 0

    def prepare(self, control_plane: ControlPlane) -> list[str]:
        """Writes its credentials and configuration; returns its command line's arguments."""
        self.dir.mkdir(parents=True)
        kubeconfig = control_plane.kubeconfig_for_user(self.dir, USER)
        config = self.dir / "config.yaml"
        config.write_text(yaml.safe_dump(self._config(kubeconfig), sort_keys=False))
        return [f"--config={config}"]

    def _config(self, kubeconfig: Path) -> dict[str, object]:
        return {
            "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
            "kind": "KubeProxyConfiguration",
            "mode": "nftables",
            "clientConnection": {"kubeconfig": str(kubeconfig)},
            "hostnameOverride": self.node_name,
            # Traffic from outside it to a Service is masqueraded; the pods' own is not.
            "clusterCIDR": self.pod_subnet,
            "nodePortAddresses": [f"{self.node_ip}/32"],  # never this machine's other addresses
            "healthzBindAddress": f"127.0.0.1:{self.healthz_port}",
            "metricsBindAddress": f"127.0.0.1:{self.metrics_port}",
            # Zero: leave the machine's conntrack sysctls as they are (kube-proxy would raise them).
            "conntrack": {
                "maxPerCore": 0,
                "min": 0,
                "tcpEstablishedTimeout": "0s",
                "tcpCloseWaitTimeout": "0s",
            },
        }

    def healthy(self) -> bool:
        """Its rules are written and recent (it answers 503 before its first sync)."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.healthz_port}/healthz", timeout=2) as reply:
                return bool(reply.status == 200)
        except OSError:
            return False
