"""A real Kubernetes control plane for the e2e tests, built from source and run on loopback.

Its API is reached with the official ``kubernetes`` client: ``ControlPlane.api_client()`` (the admin) and
``ControlPlane.api_client_for_token()`` (a ServiceAccount, say).
"""

from .audit import AuditEvent
from .binaries import ensure_binaries
from .cluster import ControlPlane

__all__ = ["AuditEvent", "ControlPlane", "ensure_binaries"]
