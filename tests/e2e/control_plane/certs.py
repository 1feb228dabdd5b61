"""The control plane's keys and certificates, made with the openssl CLI (no Python crypto dependency).

EC P-256 throughout: a key is made in milliseconds, where RSA would add seconds to every session start.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
# A test session is short; two days covers clock oddities and a long debugging evening.
_DAYS = "2"


@dataclass(frozen=True)
class KeyPair:
    cert: Path
    key: Path


@dataclass(frozen=True)
class Pki:
    """Everything the three processes and the clients need, as files in one folder."""

    ca: KeyPair
    apiserver: KeyPair  # serving cert for 127.0.0.1, localhost, and the names pods use (make_pki)
    admin: KeyPair  # client cert in group system:masters
    controller_manager: KeyPair  # client cert as the user the bootstrap RBAC binds for it
    service_account_key: Path  # signs ServiceAccount tokens (apiserver) ...
    service_account_public_key: Path  # ... and verifies them


def _openssl(*args: str) -> None:
    result = subprocess.run(["openssl", *args], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"openssl {args[0]} failed: {result.stderr.strip()}")


def _signed(folder: Path, name: str, ca: KeyPair, subject: str, *extensions: str) -> KeyPair:
    pair = KeyPair(folder / f"{name}.crt", folder / f"{name}.key")
    added = [arg for extension in extensions for arg in ("-addext", extension)]
    _openssl(
        "req", "-x509", "-CA", str(ca.cert), "-CAkey", str(ca.key), *_EC_KEY,
        "-keyout", str(pair.key), "-out", str(pair.cert), "-days", _DAYS, "-subj", subject,
        "-addext", "basicConstraints=critical,CA:FALSE", "-addext", "keyUsage=critical,digitalSignature",
        *added,
    )  # fmt: skip
    return pair


# What in-cluster clients may call the API server besides its ClusterIP.
KUBERNETES_SERVICE_NAMES = (
    "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local",
)  # fmt: skip


def make_pki(folder: Path, apiserver_ips: Sequence[str] = ()) -> Pki:
    """``apiserver_ips``: the addresses its serving cert names besides 127.0.0.1 (where pods reach it)."""
    folder.mkdir(parents=True, exist_ok=True)
    ca = KeyPair(folder / "ca.crt", folder / "ca.key")
    _openssl(
        "req", "-x509", *_EC_KEY, "-keyout", str(ca.key), "-out", str(ca.cert), "-days", _DAYS,
        "-subj", "/CN=hudi-bucket-operator-e2e-ca",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
    )  # fmt: skip
    client = "extendedKeyUsage=clientAuth"
    apiserver = _signed(
        folder, "apiserver", ca, "/CN=kube-apiserver",
        _subject_alt_name(["127.0.0.1", *apiserver_ips], ["localhost", *KUBERNETES_SERVICE_NAMES]),
        "extendedKeyUsage=serverAuth",
    )  # fmt: skip
    admin = _signed(folder, "admin", ca, "/O=system:masters/CN=e2e-admin", client)
    controller_manager = _signed(
        folder, "controller-manager", ca, "/CN=system:kube-controller-manager", client
    )
    sa_key, sa_public = folder / "service-account.key", folder / "service-account.pub"
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(sa_key))
    _openssl("pkey", "-in", str(sa_key), "-pubout", "-out", str(sa_public))
    return Pki(ca, apiserver, admin, controller_manager, sa_key, sa_public)


def make_client_cert(folder: Path, name: str, ca: KeyPair, user: str, groups: Sequence[str] = ()) -> KeyPair:
    """A client certificate the API server reads as ``user`` (its CN) in ``groups`` (its Os)."""
    subject = "".join(f"/O={group}" for group in groups) + f"/CN={user}"
    return _signed(folder, name, ca, subject, "extendedKeyUsage=clientAuth")


def _subject_alt_name(ips: Sequence[str], names: Sequence[str]) -> str:
    return "subjectAltName=" + ",".join([*(f"IP:{ip}" for ip in ips), *(f"DNS:{name}" for name in names)])
