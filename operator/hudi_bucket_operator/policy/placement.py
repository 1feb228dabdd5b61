"""Where a job's pods run, as the operator's admins say (Helm values ``jobs.driver.pod`` and
``jobs.executor.pod``, ``jobs.imagePullSecrets``): Kubernetes' own pod fields, under their own names, which
the SparkApplication's pod templates carry (``render``). Only admins set them: a table cannot move its
jobs onto other nodes, take a higher priority or pull with other credentials.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# Kubernetes' names: a DNS-1123 subdomain (PriorityClass, Secret), a label or annotation key (an optional
# DNS prefix, then a name), a label value.
_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
_KEY = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
_LABEL_VALUE = r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$"
Key = Annotated[str, Field(pattern=_KEY, max_length=316)]
SecretName = Annotated[str, Field(pattern=_SUBDOMAIN, max_length=253)]


class _Kubernetes(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Toleration(_Kubernetes):
    key: Key | Literal[""] = ""
    operator: Literal["Exists", "Equal"] = "Equal"
    value: Annotated[str, Field(pattern=_LABEL_VALUE, max_length=63)] = ""
    effect: Literal["", "NoSchedule", "PreferNoSchedule", "NoExecute"] = ""
    toleration_seconds: Annotated[int | None, Field(alias="tolerationSeconds")] = None


class Affinity(_Kubernetes):
    """Kubernetes' affinity terms, as its API has them (the API server checks them in depth when Spark
    creates the pods)."""

    node_affinity: Annotated[dict[str, Any] | None, Field(alias="nodeAffinity")] = None
    pod_affinity: Annotated[dict[str, Any] | None, Field(alias="podAffinity")] = None
    pod_anti_affinity: Annotated[dict[str, Any] | None, Field(alias="podAntiAffinity")] = None


class PodPlacement(_Kubernetes):
    """One role's pods (driver or executor): annotations, node selection and priority."""

    annotations: dict[Key, str] = {}
    node_selector: Annotated[
        dict[Key, Annotated[str, Field(pattern=_LABEL_VALUE, max_length=63)]], Field(alias="nodeSelector")
    ] = {}
    tolerations: tuple[Toleration, ...] = ()
    affinity: Affinity = Affinity()
    priority_class_name: Annotated[
        Annotated[str, Field(pattern=_SUBDOMAIN, max_length=253)] | Literal[""],
        Field(alias="priorityClassName"),
    ] = ""

    def template(self, container: dict[str, Any], pull_secrets: tuple[str, ...]) -> dict[str, Any]:
        """The pod template of ``container`` placed so, pulling the image with ``pull_secrets``."""
        spec: dict[str, Any] = {"containers": [container]}
        spec |= self.model_dump(by_alias=True, exclude_defaults=True, exclude={"annotations"}, mode="json")
        if pull_secrets:
            spec["imagePullSecrets"] = [{"name": name} for name in pull_secrets]
        template: dict[str, Any] = {"spec": spec}
        if self.annotations:
            template["metadata"] = {"annotations": dict(self.annotations)}
        return template
