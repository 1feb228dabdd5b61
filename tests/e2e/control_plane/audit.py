"""The API server's audit log, read as typed events.

An event's fields are not all always there: a request the authenticator refused (a 401, say from a
ServiceAccount token that stopped being valid while its namespace was deleted) has an empty ``user``,
and requests for discovery (``/apis``) have no ``objectRef``. Every reader of the log goes through
``AuditEvent`` so that no test assumes a shape only some events have.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class AuditEvent:
    user: str | None  # None: not authenticated (the answer was 401)
    verb: str
    stage: str
    answered_at: float  # the server's clock when it reached ``stage``, seconds since the epoch
    code: int | None  # the answer's HTTP status
    api_group: str | None  # None: not a request on a resource (discovery, /version)
    resource: str | None  # with its subresource: ``pods/log``
    name: str | None
    namespace: str | None
    forbidden: bool  # refused by the authorizer (a 403 from admission is not)
    source_ips: tuple[str, ...] = ()  # where the request came from, as the API server saw it

    @classmethod
    def parse(cls, event: dict[str, Any]) -> AuditEvent:
        ref = event.get("objectRef")
        resource = None
        if ref is not None:
            resource = ref["resource"] + (f"/{ref['subresource']}" if ref.get("subresource") else "")
        return cls(
            user=(event.get("user") or {}).get("username"),
            verb=event["verb"],
            stage=event["stage"],
            answered_at=datetime.fromisoformat(event["stageTimestamp"].replace("Z", "+00:00")).timestamp(),
            code=(event.get("responseStatus") or {}).get("code"),
            api_group=None if ref is None else ref.get("apiGroup", ""),
            resource=resource,
            name=None if ref is None else ref.get("name"),
            namespace=None if ref is None else ref.get("namespace"),
            forbidden=(event.get("annotations") or {}).get("authorization.k8s.io/decision") == "forbid",
            source_ips=tuple(event.get("sourceIPs") or ()),
        )


def read_audit_log(path: Path) -> list[AuditEvent]:
    """Every event written so far (none before the server wrote its first)."""
    lines = path.read_text().splitlines() if path.exists() else []
    return [AuditEvent.parse(json.loads(line)) for line in lines if line.strip()]
