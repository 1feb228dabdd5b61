"""A user's ingestion Deployment on the node: Apache Hudi's Spark writer (ingest_app.py) in a pod of the
job image, writing a table on the S3 server; and what it acknowledged, read back from that server."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes import client
from object_store.server import S3Server
from pyarrow import fs as pafs

from harness import Cluster, until
from hudi_bucket.hudi.table import load_table
from hudi_bucket.storage import LocalStorage
from node import Node
from node.pod_security import restricted_container

APP = Path(__file__).with_name("ingest_app.py")


def writer_options(local_table: Path) -> dict[str, str]:
    """Hudi's writer options for the orders table (tests/e2e/harness.py) as its users write it: its own
    name and version, the simple bucket index it was created with."""
    config = load_table(LocalStorage(local_table)).config
    return {
        "hoodie.table.name": config.table_name,
        "hoodie.write.table.version": str(config.table_version),
        "hoodie.datasource.write.recordkey.field": "order_id",
        "hoodie.datasource.write.partitionpath.field": "day",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.metadata.enable": "false",
        "hoodie.index.type": "BUCKET",
        "hoodie.bucket.index.engine": "SIMPLE",
        "hoodie.bucket.index.num.buckets": "2",
    }


@dataclass(frozen=True)
class IngestionPod:
    """The Deployment ``name`` (one replica) running ingest_app.py against ``uri``."""

    cluster: Cluster
    node: Node
    namespace: str
    name: str
    store: S3Server
    uri: str

    @property
    def acks(self) -> str:
        return f"{self.store.bucket}/acks-{self.name}"

    def create(
        self, image: str, toleration: dict[str, Any], options: dict[str, str], secret: str, table: str
    ) -> None:
        """The program in a ConfigMap, and the Deployment that runs it with the Secret's credentials,
        labelled by its owner as a writer of ``table`` (the operator pauses it only then)."""
        labels = {"app": self.name}
        self.cluster.core.create_namespaced_config_map(
            self.namespace,
            client.V1ConfigMap(
                metadata=client.V1ObjectMeta(name=self.name), data={APP.name: APP.read_text()}
            ),
        )
        container = restricted_container("writer", image, ["python", f"/app/{APP.name}"])
        container.env = [
            client.V1EnvVar(name="TABLE", value=self.uri),
            client.V1EnvVar(name="HUDI_OPTIONS", value=json.dumps(options)),
            client.V1EnvVar(name="HADOOP_CONF", value=json.dumps(self.store.bucket_hadoop_conf())),
            client.V1EnvVar(name="ACKS", value=f"s3a://{self.acks}"),
            client.V1EnvVar(
                name="POD_NAME",
                value_from=client.V1EnvVarSource(
                    field_ref=client.V1ObjectFieldSelector(field_path="metadata.name")
                ),
            ),
        ]
        container.env_from = [client.V1EnvFromSource(secret_ref=client.V1SecretEnvSource(name=secret))]
        container.volume_mounts = [client.V1VolumeMount(name="app", mount_path="/app", read_only=True)]
        container.resources = client.V1ResourceRequirements(requests={"cpu": "300m", "memory": "1Gi"})
        consent = {"hudi.bucketops.io/writer-of": table}
        deployment = client.V1Deployment(
            metadata=client.V1ObjectMeta(name=self.name, labels=consent),
            spec=client.V1DeploymentSpec(
                replicas=1,
                selector=client.V1LabelSelector(match_labels=labels),
                strategy=client.V1DeploymentStrategy(type="Recreate"),  # one writer at a time
                template=client.V1PodTemplateSpec(
                    metadata=client.V1ObjectMeta(labels=labels),
                    spec=client.V1PodSpec(
                        containers=[container],
                        volumes=[
                            client.V1Volume(
                                name="app", config_map=client.V1ConfigMapVolumeSource(name=self.name)
                            )
                        ],
                        tolerations=[client.V1Toleration(**toleration)],
                        termination_grace_period_seconds=120,  # the batch it is writing ends first
                    ),
                ),
            ),
        )
        self.cluster.apps.create_namespaced_deployment(self.namespace, deployment)

    def pods(self) -> list[client.V1Pod]:
        return list(
            self.cluster.core.list_namespaced_pod(self.namespace, label_selector=f"app={self.name}").items
        )

    def replicas(self) -> int:
        return int(
            self.cluster.apps.read_namespaced_deployment_scale(self.name, self.namespace).spec.replicas
        )

    def batches(self) -> list[dict[str, Any]]:
        """Every acknowledged batch, in the order they were committed: {"pod", "at", "rows"}."""
        fs = self.store.filesystem()
        found = fs.get_file_info(pafs.FileSelector(self.acks, recursive=True, allow_not_found=True))
        batches = []
        for info in found:
            if info.type == pafs.FileType.File:
                with fs.open_input_stream(info.path) as stream:
                    ack = json.loads(stream.read())
                batches.append({"pod": info.path.split("/")[-2], **ack})
        return sorted(batches, key=lambda batch: batch["at"])

    def batches_by(self, pod: str) -> int:
        return sum(batch["pod"] == pod for batch in self.batches())

    def acknowledged(self, first: list[tuple[Any, ...]]) -> dict[str, tuple[Any, ...]]:
        """Each key's last acknowledged upsert, ``first`` (the rows the table began with) before all."""
        rows = {row[0]: tuple(row) for row in first}
        for batch in self.batches():
            rows.update({row[0]: tuple(row) for row in batch["rows"]})
        return rows

    def writing_pod(self, batches: int, timeout: float, other_than: str = "") -> str:
        """The running pod (not ``other_than``) once it has acknowledged ``batches`` batches."""

        def written() -> str | None:
            for pod in self.pods():
                name = pod.metadata.name
                if (
                    name != other_than
                    and pod.metadata.deletion_timestamp is None
                    and self.batches_by(name) >= batches
                ):
                    return str(name)
            return None

        return until(written, timeout, lambda: f"{batches} batches by a new pod; {self.logs()}", every=2)

    def logs(self) -> str:
        """Each pod's phase and the end of its writer's log."""
        said = []
        for pod in self.pods():
            name = pod.metadata.name
            try:
                log = self.node.container_log(self.namespace, name, "writer")[-3000:]
            except Exception as err:  # no container yet, or gone
                log = repr(err)
            said.append(f"{name} ({pod.status.phase}):\n{log}")
        return "\n".join(said) or "no pod"

    def stop(self, timeout: float = 240) -> None:
        """Scaled to 0 (as the test's own step), its pods gone: it ended its last batch."""
        self.cluster.apps.patch_namespaced_deployment_scale(
            self.name, self.namespace, {"spec": {"replicas": 0}}
        )
        until(lambda: not self.pods(), timeout, f"{self.name}'s pods to go")
