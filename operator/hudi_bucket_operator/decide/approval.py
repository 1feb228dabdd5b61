"""Whether a plan may be applied: the spec's approval (spec.apply), and a decision made in the cluster with
the approve and deny annotations, with who made it and why (no I/O)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hudi_bucket_operator.resource.api import APPROVE, DECIDED_BY, DENY, REASON
from hudi_bucket_operator.resource.spec import TableSpec


@dataclass(frozen=True)
class Verdict:
    """A plan approved or denied by annotation, by whom and why (either may be empty: set by hand)."""

    approved: bool
    by: str
    reason: str

    def said(self) -> str:
        return f"{'approved' if self.approved else 'denied'} by {self.by or 'an annotation'}" + (
            f": {self.reason}" if self.reason else ""
        )


def verdict(annotations: Mapping[str, str], plan_id: str | None) -> Verdict | None:
    """What the annotations decided of ``plan_id``, if anything."""
    if not plan_id or plan_id not in (annotations.get(APPROVE), annotations.get(DENY)):
        return None
    by, reason = annotations.get(DECIDED_BY, ""), annotations.get(REASON, "")
    return Verdict(approved=annotations.get(DENY) != plan_id, by=by, reason=reason)


def approved(spec: TableSpec, annotations: Mapping[str, str], plan_id: str | None) -> bool:
    """Whether ``plan_id`` may be applied: approved by the spec or an annotation, and not denied."""
    decided = verdict(annotations, plan_id)
    if decided is not None:
        return decided.approved
    return spec.apply.approves(plan_id)
