"""Reading and writing timeline instant files through a Storage.

Encodings, as Hudi writes them (checked on the fixtures): a requested replacecommit is always an Avro
container (HoodieRequestedReplaceMetadata); a requested commit is empty; inflight and completed
commit/replacecommit files are Jackson JSON in layout 1 and Avro containers in layout 2. Each state is
a new file created once (create-only), so a crash leaves the instant in its last fully written state.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from typing import Any

import fastavro

from hudi_bucket.core.commits import CommitMetadata
from hudi_bucket.core.timeline import Action, Instant, State, Timeline, TimelineLayout, new_instant_time
from hudi_bucket.errors import CorruptTableError
from hudi_bucket.storage.base import Storage, join

_AVRO_MAGIC = b"Obj\x01"
# Marks the replacecommits we request, so that after a crash we know which pending instants are ours.
OWNER_KEY, OWNER = "hudi.bucket.operator", "hudi-bucket-operator"


@cache
def avro_schema(name: str) -> Any:
    """A Hudi Avro schema, as found in real Hudi-written timeline files (see hudi/avro/)."""
    text = resources.files("hudi_bucket.hudi").joinpath("avro", f"{name}.avsc").read_text()
    return fastavro.parse_schema(json.loads(text))


def _avro_bytes(schema_name: str, record: Mapping[str, object]) -> bytes:
    buffer = io.BytesIO()
    fastavro.writer(buffer, avro_schema(schema_name), [record])
    return buffer.getvalue()


class TimelineStore:
    """A table's active timeline on storage: reads instants, and moves our own instants through
    requested -> inflight -> completed in the table's layout."""

    def __init__(self, storage: Storage, layout: TimelineLayout, folder: str | None = None) -> None:
        self.storage = storage
        self.layout = layout
        self.folder = folder if folder is not None else layout.folder

    def load(self) -> Timeline:
        return Timeline.from_file_names(
            info.name for info in self.storage.list(self.folder) if not info.is_dir
        )

    def read_content(self, instant: Instant) -> dict[str, Any] | None:
        """The decoded content of one instant file; None when the file is empty."""
        path = join(self.folder, instant.file_name(self.layout))
        data = self.storage.read(path)
        if not data.strip():
            return None
        try:
            if data.startswith(_AVRO_MAGIC):
                records = list(fastavro.reader(io.BytesIO(data)))
                if not records:
                    return None
                decoded = records[0]
            else:
                decoded = json.loads(data)
        except (ValueError, EOFError) as err:
            raise CorruptTableError(
                f"{self.storage.uri}/{path}: not a readable Hudi instant ({err})"
            ) from None
        if not isinstance(decoded, dict):
            raise CorruptTableError(f"{self.storage.uri}/{path}: expected a record (an object)")
        return decoded

    def is_ours(self, instant: Instant) -> bool:
        """Whether we wrote this instant: our owner mark is in its requested file (replacecommit) or in
        its inflight file (commit, whose requested file is empty in Hudi)."""
        if instant.action not in (Action.REPLACE_COMMIT, Action.COMMIT):
            return False
        for state in (State.REQUESTED, State.INFLIGHT):
            marked = Instant(instant.timestamp, instant.action, state)
            if instant.state >= state and self.storage.exists(
                join(self.folder, marked.file_name(self.layout))
            ):
                content = self.read_content(marked) or {}
                if (content.get("extraMetadata") or {}).get(OWNER_KEY) == OWNER:
                    return True
        return False

    def read_commit_metadata(self, instant: Instant) -> CommitMetadata:
        return CommitMetadata.from_record(self.read_content(instant) or {})

    def _create(self, instant: Instant, data: bytes) -> None:
        self.storage.write(join(self.folder, instant.file_name(self.layout)), data)

    def new_instant_time(self, now: datetime | None = None) -> str:
        return new_instant_time(now or datetime.now(UTC), self.load().last_time)

    def request(self, timestamp: str, action: Action) -> Instant:
        instant = Instant(timestamp, action, State.REQUESTED)
        if action is Action.REPLACE_COMMIT:
            # Insert-overwrite's requested file carries no clustering plan, as Hudi's; ours says whose it is.
            data = _avro_bytes(
                "HoodieRequestedReplaceMetadata",
                {
                    "operationType": "INSERT_OVERWRITE",
                    "clusteringPlan": None,
                    "extraMetadata": {OWNER_KEY: OWNER},
                    "version": 1,
                },
            )
        elif action is Action.COMMIT:
            data = b""
        else:
            raise ValueError(f"we only write commit and replacecommit instants, not {action.value}")
        self._create(instant, data)
        return instant

    def start(self, requested: Instant, plan: CommitMetadata) -> Instant:
        """Mark the instant inflight; ``plan`` says which partitions it writes (no file stats yet)."""
        instant = Instant(requested.timestamp, requested.action, State.INFLIGHT)
        plan = replace(plan, extra_metadata={**plan.extra_metadata, OWNER_KEY: OWNER})
        if self.layout is TimelineLayout.V1:
            data = plan.to_json(replace=False)
        else:
            data = _avro_bytes("HoodieCommitMetadata", plan.to_record(replace=False))
        self._create(instant, data)
        return instant

    def complete(self, inflight: Instant, metadata: CommitMetadata, now: datetime | None = None) -> Instant:
        """Complete the instant: the one step that makes its files visible to readers."""
        replace = inflight.action is Action.REPLACE_COMMIT
        completion = None
        if self.layout is TimelineLayout.V2:
            completion = self.new_instant_time(now)
        instant = Instant(inflight.timestamp, inflight.action, State.COMPLETED, completion)
        if self.layout is TimelineLayout.V1:
            data = metadata.to_json(replace=replace)
        else:
            schema = "HoodieReplaceCommitMetadata" if replace else "HoodieCommitMetadata"
            data = _avro_bytes(schema, metadata.to_record(replace=replace))
        self._create(instant, data)
        return instant
