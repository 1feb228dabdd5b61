"""The node's container runtime: Debian's containerd 1.6 with runc and the CNI bridge plugin, every
folder it would take by default (/var/run/containerd, /opt/containerd, /etc/cni/net.d, /var/run/netns)
moved into the run folder; images loaded from OCI layouts, or pulled from a registry on loopback.

Its root (/var/lib/containerd: the images, a minute to load ours) is a cache that outlives the run,
kept only when the node stopped cleanly: it then holds no container (``remove_containers``), and a next
node loads nothing again. After a killed run it is wiped (``forget_images``), as containers it knew of
would otherwise come back."""

from __future__ import annotations

import io
import json
import subprocess
import tarfile
from pathlib import Path

from .host import CNI_BRIDGE, CNI_NETWORK

CNI_PLUGINS = Path("/usr/lib/cni")  # Debian's containernetworking-plugins
REF_NAME = "org.opencontainers.image.ref.name"  # an OCI index's tag of a manifest
POD_SUBNET = "10.213.1.0/24"
NAMESPACE = "k8s.io"
CRI_ROOT = "io.containerd.grpc.v1.cri"  # containerd's namespace for what the CRI plugin (so kubelet) sees
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
    def __init__(self, run_dir: Path, image_store: Path, sandbox_image: str) -> None:
        self.dir = run_dir / "containerd"
        self.image_store = image_store
        self._clean_mark = image_store / "stopped-cleanly"
        self.socket = self.dir / "containerd.sock"
        self.config_path = self.dir / "config.toml"
        self.cni_conf_dir = self.dir / "cni-conf"
        self.registries = self.dir / "registries"
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
root = "{self.image_store / "root"}"
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
[{cri}.registry]
  config_path = "{self.registries}"  # a hosts.toml per registry (trust_plain_http), read at each pull
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

    def trust_plain_http(self, host: str) -> None:
        """Pulls from the registry at ``host`` (HOST:PORT) over plain HTTP: the tests' registry on loopback."""
        folder = self.registries / host
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "hosts.toml").write_text(
            f'server = "http://{host}"\n[host."http://{host}"]\n  capabilities = ["pull", "resolve"]\n'
        )

    def ctr(self, *args: str, timeout: float = 300, check: bool = True) -> str:
        result = subprocess.run(
            ["ctr", f"--address={self.socket}", f"--namespace={NAMESPACE}", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and result.returncode != 0:
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

    def open_image_store(self) -> None:
        """Before containerd starts: the store as a clean stop left it, else an empty one."""
        if not self._clean_mark.exists():
            self.forget_images()
        self.image_store.mkdir(parents=True, exist_ok=True)
        self._clean_mark.unlink(missing_ok=True)  # until this run, too, stops cleanly

    def forget_images(self) -> None:
        subprocess.run(["rm", "-rf", "--one-file-system", str(self.image_store)], check=True)

    def remove_containers(self) -> None:
        """Every container and its task, while containerd still runs: what a next node must not find."""
        for container in self.ctr("containers", "list", "--quiet").split():
            self.ctr("tasks", "delete", "--force", container, check=False)
            self.ctr("containers", "delete", container)
        # Their snapshots go with containerd's garbage collection, which would not have run before it
        # stops; ctr waits for one only when it deletes an image: a name made for that, then.
        self.ctr("images", "tag", self.sandbox_image, f"{self.sandbox_image}-collect")
        self.ctr("images", "delete", "--sync", f"{self.sandbox_image}-collect")

    def close_image_store(self) -> None:
        """After containerd stopped, its containers removed: the CRI plugin's files of the pods it ran
        (hosts, resolv.conf) go, and the store is marked fit for a next run."""
        for kind in ("sandboxes", "containers"):
            subprocess.run(
                ["rm", "-rf", "--one-file-system", str(self.image_store / "root" / CRI_ROOT / kind)],
                check=True,
            )
        self._clean_mark.touch()

    def load(self, layout_and_tag: str, repository: str) -> str:
        """The image at ``LAYOUT:TAG`` (an OCI layout) as ``REPOSITORY:TAG``, the name it returns (pods use
        it with imagePullPolicy Never). Loading the same image twice loads nothing."""
        tag = layout_and_tag.rsplit(":", 1)[1]
        name = f"{repository}:{tag}"
        names = self.image_names()
        if name in names:
            return name
        for earlier in names:  # of an earlier build: not needed again, and a gigabyte each
            if earlier.startswith(f"{repository}:"):
                self.ctr("images", "delete", "--sync", earlier)  # its layers too, now
        archive = self.dir / "import.tar"
        self._archive(layout_and_tag, archive)
        try:
            self.ctr("images", "import", f"--base-name={repository}", str(archive))
        finally:
            archive.unlink()
        if name not in self.image_names():
            raise RuntimeError(f"ctr imported {layout_and_tag} but not as {name}")
        return name

    def _archive(self, layout_and_tag: str, archive: Path) -> None:
        """An OCI archive of the image at ``LAYOUT:TAG`` (its layers compressed as they are), holding only
        the layers containerd does not have: those of an image loaded before (the job image's, under the
        Spark Operator's; the Debian base under both of ours) are not copied again. ctr imports the
        manifest and its config, and unpacks the layers from its content store."""
        layout, tag = layout_and_tag.rsplit(":", 1)
        root = Path(layout)

        def blob(digest: str) -> Path:
            algorithm, hexdigest = digest.split(":", 1)
            return root / "blobs" / algorithm / hexdigest

        index = json.loads((root / "index.json").read_text())
        [entry] = [m for m in index["manifests"] if (m.get("annotations") or {}).get(REF_NAME) == tag]
        manifest = json.loads(blob(entry["digest"]).read_bytes())
        present = set(self.ctr("content", "list", "--quiet").split())
        layers = [layer["digest"] for layer in manifest["layers"] if layer["digest"] not in present]
        with tarfile.open(archive, "w") as tar:
            for name, data in (
                ("oci-layout", json.dumps({"imageLayoutVersion": "1.0.0"}).encode()),
                ("index.json", json.dumps({"schemaVersion": 2, "manifests": [entry]}).encode()),
            ):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            for digest in (entry["digest"], manifest["config"]["digest"], *layers):
                tar.add(blob(digest), arcname=f"blobs/{digest.replace(':', '/', 1)}")
