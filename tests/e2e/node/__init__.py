"""A real Kubernetes node for the e2e tests (kubelet, containerd, runc, the CNI bridge), as root."""

from .node import Node
from .tools import install_tools, missing_tools

__all__ = ["Node", "install_tools", "missing_tools"]
