"""The node's container runtime: Debian's containerd 1.6 with runc and the CNI bridge plugin, every
folder it would take by default (/var/lib/containerd, /run/containerd, /opt/containerd, /etc/cni/net.d,
/var/run/netns) moved into the run folder, and images loaded from OCI layouts (no registry)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from .host import CNI_BRIDGE, CNI_NETWORK

CNI_PLUGINS = Path("/usr/lib/cni")  # Debian's containernetworking-plugins
POD_SUBNET = "10.213.1.0/24"
NAMESPACE = "k8s.io"  # containerd's namespace for what the CRI plugin (so kubelet) sees
# Plugins a node needs none of: snapshotters for other filesystems, tracing. (The v1 runtime stays:
# containerd 1.6's task service needs it loaded, unused as it is.)
DISABLED_PLUGINS = (
    "io.containerd.snapshotter.v1.aufs",
    "io.containerd.snapshotter.v1.btrfs",
    "io.containerd.snapshotter.v1.devmapper",
    "io.containerd.snapshotter.v1.zfs",
    "io.containerd.tracing.processor.v1.otlp",
    "io.containerd.internal.v1.tracing",
)


class Containerd:
    def __init__(self, run_dir: Path, sandbox_image: str) -> None:
        self.dir = run_dir / "containerd"
        self.socket = self.dir / "containerd.sock"
        self.config_path = self.dir / "config.toml"
        self.cni_conf_dir = self.dir / "cni-conf"
        self.sandbox_image = sandbox_image

    @property
    def endpoint(self) -> str:
        return f"unix://{self.socket}"

    def argv(self) -> list[str]:
        return ["containerd", f"--config={self.config_path}"]

    def write_config(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.cni_conf_dir.mkdir(exist_ok=True)
        self.config_path.write_text(self._config())
        (self.cni_conf_dir / "10-hbo-node.conflist").write_text(json.dumps(self._cni_network(), indent=2))

    def _config(self) -> str:
        d = self.dir
        cri = 'plugins."io.containerd.grpc.v1.cri"'
        disabled = ", ".join(f'"{plugin}"' for plugin in DISABLED_PLUGINS)
        return f"""version = 2
root = "{d / "root"}"
state = "{d / "state"}"
disabled_plugins = [{disabled}]

[grpc]
  address = "{self.socket}"
[ttrpc]
  address = "{self.socket}.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "{d / "opt"}"
[plugins."io.containerd.runtime.v1.linux"]
  runtime_root = "{d / "runc-v1"}"

[{cri}]
  sandbox_image = "{self.sandbox_image}"
  # containerd runs with the test session's OOM score; without this it would hand containers a lower
  # one than its own, which an unprivileged score may not do.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
[{cri}.cni]
  bin_dir = "{CNI_PLUGINS}"
  conf_dir = "{self.cni_conf_dir}"
[{cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"
[{cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[{cri}.containerd.runtimes.runc.options]
  BinaryName = "runc"  # Debian's: crun cannot run on this machine's cgroups v1
  Root = "{d / "runc"}"
  SystemdCgroup = false
"""

    def _cni_network(self) -> dict[str, object]:
        return {
            "cniVersion": "0.4.0",
            "name": CNI_NETWORK,
            "plugins": [
                {
                    "type": "bridge",
                    "bridge": CNI_BRIDGE,
                    "isGateway": True,
                    "ipMasq": False,  # pods reach this machine, nothing beyond: no iptables rules
                    "ipam": {
                        "type": "host-local",
                        "ranges": [[{"subnet": POD_SUBNET}]],
                        "routes": [{"dst": "0.0.0.0/0"}],
                        "dataDir": str(self.dir / "ipam"),
                    },
                }
            ],
        }

    def ctr(self, *args: str, timeout: float = 300) -> str:
        result = subprocess.run(
            ["ctr", f"--address={self.socket}", f"--namespace={NAMESPACE}", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"ctr {' '.join(args)} exited {result.returncode}: {result.stderr.strip()}")
        return result.stdout

    def serving(self) -> bool:
        try:
            self.ctr("version", timeout=5)
        except (RuntimeError, subprocess.TimeoutExpired):
            return False
        return True

    def image_names(self) -> set[str]:
        return set(self.ctr("images", "list", "--quiet").split())

    def load(self, layout_and_tag: str, repository: str) -> str:
        """The image at ``LAYOUT:TAG`` (an OCI layout) as ``REPOSITORY:TAG``, the name it returns (pods use
        it with imagePullPolicy Never). Loading the same image twice loads nothing."""
        tag = layout_and_tag.rsplit(":", 1)[1]
        name = f"{repository}:{tag}"
        if name in self.image_names():
            return name
        # An OCI archive keeps the layers compressed as they are (a Docker archive would inflate them).
        archive = self.dir / "import.tar"
        subprocess.run(
            ["skopeo", "copy", "--quiet", f"oci:{layout_and_tag}", f"oci-archive:{archive}:{tag}"],
            capture_output=True,
            check=True,
        )
        try:
            self.ctr("images", "import", f"--base-name={repository}", str(archive))
        finally:
            archive.unlink()
        if name not in self.image_names():
            raise RuntimeError(f"ctr imported {layout_and_tag} but not as {name}")
        return name
