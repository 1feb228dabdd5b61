"""Processes that run as a pod would: with a ServiceAccount's files where the kubelet mounts them.

There is no kubelet here, so a "pod" is a local process in a private mount namespace (``unshare``) whose
``/var/run/secrets/kubernetes.io/serviceaccount`` holds a token from the TokenRequest API, the cluster's
CA and the namespace, with ``KUBERNETES_SERVICE_HOST``/``_PORT`` pointing at the API server. Code that
finds its identity the in-cluster way (the official client's ``load_incluster_config``) finds it there,
and nothing outside the namespace sees the files.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import urlparse

from control_plane import ControlPlane

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"

# /var/run is /run here: a fresh tmpfs over it (inside the namespace only) makes room for the mount
# point without touching the host; /run/shm is put back for programs that use it.
_ENTER_POD = (
    'mount -t tmpfs tmpfs /run && ln -s /dev/shm /run/shm && mkdir -p "$SA_DIR" '
    '&& cp "$SA_FILES"/* "$SA_DIR"/ && unset SA_FILES SA_DIR && exec "$@"'
)


def available() -> str:
    """Why pods cannot run here ('' when they can)."""
    return "" if shutil.which("unshare") else "unshare (util-linux) is missing"


def service_account_files(
    control_plane: ControlPlane, namespace: str, service_account: str, folder: Path
) -> Path:
    """What the kubelet mounts for this ServiceAccount: token, ca.crt, namespace."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "token").write_text(control_plane.token_for(namespace, service_account))
    (folder / "ca.crt").write_bytes(control_plane.ca_file.read_bytes())
    (folder / "namespace").write_text(namespace)
    return folder


def pod_command(command: list[str]) -> list[str]:
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", _ENTER_POD, "pod", *command]


def pod_env(control_plane: ControlPlane, files: Path) -> dict[str, str]:
    """What a container's environment adds: where the API server is (and, for _ENTER_POD, the files)."""
    server = urlparse(control_plane.server)
    return {
        "KUBERNETES_SERVICE_HOST": str(server.hostname),
        "KUBERNETES_SERVICE_PORT": str(server.port),
        "SA_FILES": str(files),
        "SA_DIR": SERVICE_ACCOUNT_DIR,
    }
