"""The job report: what every `hudi-bucket-job` command writes for the operator (and for people).

One JSON document per run. ``outcome`` is the one field a reader must look at first; ``result`` is the
command's own payload (a plan, an apply's instant and stats, verify's violations ...). The operator turns
reports into status, so fields only ever get added, and ``version`` says which shape a report has.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from hudi_bucket.errors import HudiBucketError

REPORT_VERSION = 1


class Outcome(StrEnum):
    SUCCEEDED = "Succeeded"
    NO_CHANGE = "NoChange"  # already converged: nothing written
    FAILED = "Failed"


@dataclass(frozen=True)
class JobReport:
    command: str
    table: str
    outcome: Outcome
    message: str
    started: str
    finished: str
    result: dict[str, Any] = field(default_factory=dict)
    error: dict[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "version": REPORT_VERSION,
            "command": self.command,
            "table": self.table,
            "outcome": self.outcome.value,
            "message": self.message,
            "started": self.started,
            "finished": self.finished,
            "result": self.result,
        }
        if self.error:
            doc["error"] = self.error
        return doc

    def to_json(self) -> bytes:
        return (json.dumps(self.to_dict(), indent=2, sort_keys=False) + "\n").encode()

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> JobReport:
        return cls(
            command=doc["command"],
            table=doc["table"],
            outcome=Outcome(doc["outcome"]),
            message=doc.get("message", ""),
            started=doc.get("started", ""),
            finished=doc.get("finished", ""),
            result=doc.get("result") or {},
            error=doc.get("error"),
        )


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def error_doc(err: BaseException) -> dict[str, str]:
    """What the operator shows of a failure: the error's kind, message and what to do."""
    hint = err.hint if isinstance(err, HudiBucketError) else ""
    message = str(err.args[0]) if isinstance(err, HudiBucketError) and err.args else str(err)
    return {"type": type(err).__name__, "message": message, "hint": hint}
