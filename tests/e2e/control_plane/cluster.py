"""A real Kubernetes control plane on loopback: etcd, kube-apiserver and kube-controller-manager.

Its clients here use 127.0.0.1; the API server also listens on the address pods reach it at
(``ADVERTISE_ADDRESS``, through the `kubernetes` Service), which exists while tests/e2e/node runs a node.
No nodes, kubelet or scheduler otherwise: Pods stay Pending. Everything else is real: authentication (client
certificates, ServiceAccount tokens from the TokenRequest API), RBAC, admission (CEL of CRDs included),
garbage collection by owner references, namespace deletion.

The garbage collector looks for new resource types every 30 s (fixed in kube-controller-manager), so
owner references on kinds of a CRD installed after start can take that long to be acted on.
"""

from __future__ import annotations

import atexit
import http.client
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import urllib3
from kubernetes import client, config

from .audit import AuditEvent, read_audit_log
from .certs import Pki, make_client_cert, make_pki
from .kubeconfig import write_kubeconfig
from .processes import ManagedProcess, wait_until

# Where pods reach the API server: the address of the node's own link (tests/e2e/node makes it), which
# the API server advertises as the endpoint of the `kubernetes` Service. Off the node, nothing dials it.
ADVERTISE_ADDRESS = "10.213.0.1"
# Services get ClusterIPs from here; the node's kube-proxy serves them (the `kubernetes` Service's, the
# first, is what in-cluster clients dial). Not loopback: a pod's own loopback would answer that.
SERVICE_CLUSTER_IP_RANGE = "10.213.128.0/24"
KUBERNETES_SERVICE_IP = "10.213.128.1"
# Added to the default plugins (which already hold NamespaceLifecycle and ServiceAccount): owner
# references then need the rights they need in a production cluster.
ADMISSION_PLUGINS = "NamespaceLifecycle,ServiceAccount,OwnerReferencesPermissionEnforcement,NodeRestriction"
ISSUER = "https://kubernetes.default.svc.cluster.local"
# A probe that hangs is no answer: it should fail fast and be asked again.
PROBE_TIMEOUT = 2.0
# What a probe may see while a server is still coming up. urllib3 gives up on a refused connection
# with its own errors (MaxRetryError), none of them an OSError; any answer but 2xx (a 404 before the
# controllers have run) is an ApiException, and so is a TLS failure (status 0).
_NOT_READY_YET = (OSError, urllib3.exceptions.HTTPError, http.client.HTTPException, client.ApiException)


def _free_ports(count: int, address: str = "127.0.0.1") -> list[int]:
    """Distinct ports nobody listens on now (held open together, so none is handed out twice)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for held in sockets:
            held.bind((address, 0))
        return [held.getsockname()[1] for held in sockets]
    finally:
        for held in sockets:
            held.close()


class ControlPlane:
    """Start with ``start()`` (or ``with``), stop with ``stop()``; the admin identity is system:masters."""

    def __init__(self, bin_dir: Path, work_dir: Path | None = None) -> None:
        self.bin_dir = Path(bin_dir)
        for binary in ("etcd", "kube-apiserver", "kube-controller-manager"):
            if not os.access(self.bin_dir / binary, os.X_OK):
                raise FileNotFoundError(
                    f"{self.bin_dir / binary} missing: run tests/e2e/control_plane/build.sh"
                )
        # A folder we made we also remove; one we were given (pytest's tmp_path) is its owner's.
        self._owns_work_dir = work_dir is None
        self.work_dir = Path(tempfile.mkdtemp(prefix="hbo-control-plane-")) if work_dir is None else work_dir
        self.work_dir.mkdir(parents=True, exist_ok=True)
        etcd_port, etcd_peer_port = _free_ports(2)
        (apiserver_port,) = _free_ports(1, "0.0.0.0")  # it listens on every address
        self.etcd_url = f"http://127.0.0.1:{etcd_port}"
        self._etcd_peer_url = f"http://127.0.0.1:{etcd_peer_port}"
        self.server = f"https://127.0.0.1:{apiserver_port}"
        self.kubeconfig_path = self.work_dir / "admin.kubeconfig"
        self.audit_log_path = self.work_dir / "audit.log"
        self._processes: list[ManagedProcess] = []
        self._pki: Pki | None = None
        self._admin: client.ApiClient | None = None

    # --- what tests use -------------------------------------------------------------------------------

    @property
    def ca_file(self) -> Path:
        return self.pki.ca.cert

    @property
    def pki(self) -> Pki:
        if self._pki is None:
            raise RuntimeError("the control plane is not started")
        return self._pki

    def token_for(self, namespace: str, service_account: str, expiration_seconds: int = 3600) -> str:
        """A token for that ServiceAccount from the TokenRequest API (the API wants at least 600 s)."""
        request = client.AuthenticationV1TokenRequest(
            spec=client.V1TokenRequestSpec(expiration_seconds=expiration_seconds)
        )
        granted = client.CoreV1Api(self.api_client()).create_namespaced_service_account_token(
            service_account, namespace, request
        )
        return granted.status.token

    def kubeconfig_for_token(self, token: str, path: Path) -> Path:
        """A kubeconfig authenticating with ``token``, so a process can run as a ServiceAccount."""
        return write_kubeconfig(
            Path(path), server=self.server, ca_file=self.ca_file, user="token", token=token
        )

    def kubeconfig_for_user(self, folder: Path, user: str, groups: tuple[str, ...] = ()) -> Path:
        """A kubeconfig (in ``folder``, with its client certificate) authenticating as ``user`` in
        ``groups``: how a node's daemons (kubelet, kube-proxy, kube-scheduler) sign in."""
        folder.mkdir(parents=True, exist_ok=True)
        cert = make_client_cert(folder, "client", self.pki.ca, user, groups)
        return write_kubeconfig(
            folder / "kubeconfig",
            server=self.server,
            ca_file=self.pki.ca.cert,
            user=user,
            client_cert=(cert.cert, cert.key),
        )

    def api_client(self) -> client.ApiClient:
        """The admin's client (group system:masters), from the admin kubeconfig; one for the whole run."""
        if self._admin is None:
            if self._pki is None:  # the kubeconfig is written when it starts
                raise RuntimeError("the control plane is not started")
            # persist_config=False: the kubeconfig is ours, and nothing the client learns belongs in it.
            self._admin = config.new_client_from_config(
                config_file=str(self.kubeconfig_path),
                persist_config=False,
                client_configuration=_loopback_configuration(),
            )
        return self._admin

    def api_client_for_token(self, token: str) -> client.ApiClient:
        """A client authenticating with ``token`` alone (no client certificate): that identity's rights."""
        configuration = _loopback_configuration()
        configuration.host = self.server
        configuration.ssl_ca_cert = str(self.ca_file)
        # The generated client sends api_key["BearerToken"] as the Authorization header, after its prefix.
        configuration.api_key = {"BearerToken": token}
        configuration.api_key_prefix = {"BearerToken": "Bearer"}
        return client.ApiClient(configuration)

    def audit_events(self) -> list[AuditEvent]:
        """Every request the API server has answered so far: who, what, and the answer's code."""
        return read_audit_log(self.audit_log_path)

    def kubectl(
        self,
        *args: str,
        input: str | None = None,
        check: bool = True,
        timeout: float = 60.0,
        kubeconfig: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """kubectl (``$KUBECTL``, else the one on PATH), as the admin unless given another kubeconfig.

        Raises with kubectl's stderr when it fails and ``check`` is true.
        """
        kubectl = os.environ.get("KUBECTL") or shutil.which("kubectl")
        if kubectl is None:
            raise FileNotFoundError("no kubectl on PATH (or set KUBECTL to one)")
        result = subprocess.run(
            [kubectl, f"--kubeconfig={kubeconfig or self.kubeconfig_path}", *args],
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and result.returncode != 0:
            raise RuntimeError(
                f"kubectl {' '.join(args)} exited {result.returncode}: {result.stderr.strip()}"
            )
        return result

    def wait_until_allowed(
        self, user: str, verb: str, resource: str, namespace: str, subresource: str = ""
    ) -> None:
        """Until RBAC lets ``user`` do it (to ``subresource``, such as ``scale``, when given): the
        authorizer learns of a new Role or RoleBinding through a watch, a moment after it was created
        (longer on a loaded machine)."""
        args = ["auth", "can-i", verb, resource, "-n", namespace, f"--as={user}"]
        if subresource:
            args.append(f"--subresource={subresource}")
        on = f"{resource}/{subresource}" if subresource else resource
        wait_until(
            lambda: self.kubectl(*args, check=False).stdout.strip() == "yes",
            30,
            self._processes,  # fails at once, with the logs, if the control plane dies meanwhile
            f"{user} may {verb} {on} in {namespace}",
        )

    # --- lifecycle ------------------------------------------------------------------------------------

    def __enter__(self) -> ControlPlane:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def start(self, timeout: float = 60.0) -> None:
        """Call it from the main thread: the processes die with the thread that started them."""
        atexit.register(self.stop)  # an interpreter leaving without calling stop(), after Ctrl-C say
        try:
            self._start(timeout)
        except BaseException:
            atexit.unregister(self.stop)
            self._stop_processes()  # the work dir stays: its logs tell what went wrong
            raise

    def stop(self) -> None:
        atexit.unregister(self.stop)
        if self._admin is not None:
            self._admin.close()
            self._admin = None
        self._stop_processes()
        if self._owns_work_dir:
            shutil.rmtree(self.work_dir, ignore_errors=True)

    def pids(self) -> dict[str, int]:
        """The running processes by name (etcd, kube-apiserver, kube-controller-manager)."""
        return {p.name: p.pid for p in self._processes if p.pid is not None and p.exit_code() is None}

    def _stop_processes(self) -> None:
        """The controller manager first, etcd last: each stops while what it talks to is still there."""
        for process in reversed(self._processes):
            process.stop()
        self._processes.clear()

    def _start(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        pki = self._pki = make_pki(self.work_dir / "pki", [ADVERTISE_ADDRESS, KUBERNETES_SERVICE_IP])
        write_kubeconfig(
            self.kubeconfig_path,
            server=self.server,
            ca_file=pki.ca.cert,
            user="admin",
            client_cert=(pki.admin.cert, pki.admin.key),
        )
        controller_manager_kubeconfig = write_kubeconfig(
            self.work_dir / "controller-manager.kubeconfig",
            server=self.server,
            ca_file=pki.ca.cert,
            user="system:kube-controller-manager",
            client_cert=(pki.controller_manager.cert, pki.controller_manager.key),
        )

        etcd = self._launch("etcd", self._etcd_args())
        wait_until(self._etcd_healthy, deadline - time.monotonic(), [etcd], "etcd is healthy")
        apiserver = self._launch("kube-apiserver", self._apiserver_args(pki))
        wait_until(self._apiserver_ready, deadline - time.monotonic(), [etcd, apiserver], "/readyz is ok")
        # Started only now: it gives up if the apiserver is not healthy within 10 s of its start.
        controller_manager = self._launch(
            "kube-controller-manager", self._controller_manager_args(pki, controller_manager_kubeconfig)
        )
        wait_until(
            self._service_accounts_work,
            deadline - time.monotonic(),
            [etcd, apiserver, controller_manager],
            "namespace default has its ServiceAccount and the kube-root-ca.crt ConfigMap",
        )

    def _launch(self, name: str, args: list[str]) -> ManagedProcess:
        process = ManagedProcess(name, [str(self.bin_dir / name), *args], self.work_dir / f"{name}.log")
        self._processes.append(process)
        process.start()
        return process

    def _etcd_args(self) -> list[str]:
        return [
            "--name=e2e",
            f"--data-dir={self.work_dir / 'etcd'}",
            f"--listen-client-urls={self.etcd_url}",
            f"--advertise-client-urls={self.etcd_url}",
            f"--listen-peer-urls={self._etcd_peer_url}",
            f"--initial-advertise-peer-urls={self._etcd_peer_url}",
            f"--initial-cluster=e2e={self._etcd_peer_url}",
            "--unsafe-no-fsync",  # a throwaway store: durability only costs time here
            "--log-level=warn",
        ]

    def _apiserver_args(self, pki: Pki) -> list[str]:
        return [
            f"--etcd-servers={self.etcd_url}",
            # Every address, as kubeadm's default: local clients use 127.0.0.1, pods the node's address.
            "--bind-address=0.0.0.0",
            f"--advertise-address={ADVERTISE_ADDRESS}",
            f"--secure-port={self.server.rsplit(':', 1)[1]}",
            f"--tls-cert-file={pki.apiserver.cert}",
            f"--tls-private-key-file={pki.apiserver.key}",
            f"--client-ca-file={pki.ca.cert}",
            f"--service-account-issuer={ISSUER}",
            f"--service-account-key-file={pki.service_account_public_key}",
            f"--service-account-signing-key-file={pki.service_account_key}",
            f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
            "--authorization-mode=Node,RBAC",
            f"--enable-admission-plugins={ADMISSION_PLUGINS}",
            "--allow-privileged=true",
            # Every request, at the Metadata level (who, verb, resource, answer): tests read it to show
            # what an identity really needed.
            f"--audit-policy-file={self._audit_policy()}",
            f"--audit-log-path={self.audit_log_path}",
            "--audit-log-format=json",
            "--audit-log-mode=blocking",  # written before the answer, so a test reads it complete
            "--profiling=false",
        ]

    def _audit_policy(self) -> Path:
        policy = self.work_dir / "audit-policy.yaml"
        policy.write_text(
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\n"
            "rules:\n  - level: Metadata\n"
        )
        return policy

    def _controller_manager_args(self, pki: Pki, kubeconfig: Path) -> list[str]:
        return [
            f"--kubeconfig={kubeconfig}",
            "--leader-elect=false",
            "--secure-port=0",  # nothing here scrapes it, and a port is one more thing to collide
            "--controllers=*",
            f"--service-account-private-key-file={pki.service_account_key}",
            f"--root-ca-file={pki.ca.cert}",
            "--use-service-account-credentials=true",  # each controller as its own, RBAC-bound identity
            f"--cluster-signing-cert-file={pki.ca.cert}",
            f"--cluster-signing-key-file={pki.ca.key}",
            "--profiling=false",
        ]

    # --- readiness probes -----------------------------------------------------------------------------

    def _etcd_healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.etcd_url}/health", timeout=2) as reply:
                return b'"health":"true"' in reply.read()
        except (OSError, http.client.HTTPException):
            return False

    def _apiserver_ready(self) -> bool:
        """/readyz is no resource, so no generated method: a bare GET through the admin's client."""
        admin = self.api_client()
        method, url, headers, body, post = admin.param_serialize("GET", "/readyz")
        try:
            reply = admin.call_api(method, url, headers, body, post, _request_timeout=PROBE_TIMEOUT)
            text = reply.read()  # read whatever the status, so the connection goes back to the pool
        except _NOT_READY_YET:
            return False
        return reply.status == 200 and text == b"ok"

    def _service_accounts_work(self) -> bool:
        """Two controllers that start independently: each puts one object into every namespace."""
        core = client.CoreV1Api(self.api_client())
        try:
            core.read_namespaced_service_account("default", "default", _request_timeout=PROBE_TIMEOUT)
            core.read_namespaced_config_map("kube-root-ca.crt", "default", _request_timeout=PROBE_TIMEOUT)
        except _NOT_READY_YET:
            return False
        return True


def _loopback_configuration() -> client.Configuration:
    """A Configuration that never goes through a proxy: v37 takes one from HTTPS_PROXY and friends by
    itself, and a proxy cannot reach an API server on this machine's loopback."""
    configuration = client.Configuration()
    configuration.proxy = None  # set, not left to default, so the environment is no longer consulted
    return configuration
