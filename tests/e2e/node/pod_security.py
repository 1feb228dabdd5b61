"""Pod Security ``restricted``: a namespace that enforces it, and a container that meets it."""

from __future__ import annotations

from kubernetes import client

from control_plane import ControlPlane
from control_plane.processes import wait_until

RESTRICTED = "pod-security.kubernetes.io/enforce"


def restricted_namespace(control_plane: ControlPlane, namespace: str) -> None:
    control_plane.kubectl("label", "namespace", namespace, f"{RESTRICTED}=restricted")
    core = client.CoreV1Api(control_plane.api_client())

    def has_default_service_account() -> bool:  # made by a controller, a moment after the namespace
        try:
            core.read_namespaced_service_account("default", namespace)
        except client.ApiException:
            return False
        return True

    wait_until(has_default_service_account, 30, [], "the namespace has its default ServiceAccount")


def restricted_container(name: str, image: str, args: list[str]) -> client.V1Container:
    """What Pod Security ``restricted`` asks of a container: not root, no privilege escalation, no
    capabilities, the runtime's default seccomp profile."""
    return client.V1Container(
        name=name,
        image=image,
        # Pulled from the tests' registry when named by digest, else loaded into the node beforehand.
        image_pull_policy="IfNotPresent" if "@sha256:" in image else "Never",
        args=args,
        security_context=client.V1SecurityContext(
            run_as_non_root=True,
            allow_privilege_escalation=False,
            capabilities=client.V1Capabilities(drop=["ALL"]),
            seccomp_profile=client.V1SeccompProfile(type="RuntimeDefault"),
        ),
    )
