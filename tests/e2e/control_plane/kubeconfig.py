"""Kubeconfig files: self-contained (certificates embedded), so a copy works from anywhere."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import yaml


def _embedded(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def write_kubeconfig(
    path: Path,
    *,
    server: str,
    ca_file: Path,
    user: str,
    client_cert: tuple[Path, Path] | None = None,
    token: str | None = None,
    namespace: str = "default",
) -> Path:
    """Writes a kubeconfig with one cluster, one user (client cert or bearer token) and one context."""
    credentials: dict[str, str] = {}
    if client_cert is not None:
        credentials["client-certificate-data"] = _embedded(client_cert[0])
        credentials["client-key-data"] = _embedded(client_cert[1])
    if token is not None:
        credentials["token"] = token
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "e2e", "cluster": {"server": server, "certificate-authority-data": _embedded(ca_file)}}
        ],
        "users": [{"name": user, "user": credentials}],
        "contexts": [{"name": user, "context": {"cluster": "e2e", "user": user, "namespace": namespace}}],
        "current-context": user,
        "preferences": {},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    # It holds a credential: readable by its owner only, from the moment it exists.
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        yaml.safe_dump(config, handle, sort_keys=False)
    return path
