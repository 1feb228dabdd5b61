"""How evenly a table's data is spread over its file groups (pure: no I/O): the largest live file group
against the median one, by bytes on storage.

Under a bucket index a file group is a bucket, so a hot key, or a partition left with too few buckets
while the others grew, shows as groups far above the median; a skew near 1 is an even table. A group is
measured by its latest file slice (base file and log files). Groups whose data lives in a bootstrap
source file (a skeleton base file) are left out: their size on the table says nothing of their data.
"""

from __future__ import annotations

from collections.abc import Iterable
from statistics import median_low

from pydantic import dataclasses as pydantic_dataclasses

from hudi_bucket.core.filegroups import FileGroup
from hudi_bucket.core.report_json import REPORT_JSON, ReportJson


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class FileGroupSizes(ReportJson):
    """The live file groups measured, and the largest and the median of their sizes in bytes."""

    count: int = 0
    largest_bytes: int = 0
    median_bytes: int = 0

    @classmethod
    def of(cls, groups: Iterable[FileGroup]) -> FileGroupSizes:
        sizes = [size for group in groups if (size := group_bytes(group)) is not None]
        if not sizes:
            return cls()
        return cls(len(sizes), max(sizes), median_low(sizes))

    @property
    def skew(self) -> float | None:
        """The largest group's size over the median's (None when there is no median to compare with)."""
        return self.largest_bytes / self.median_bytes if self.median_bytes else None


def group_bytes(group: FileGroup) -> int | None:
    """The bytes of a group's latest slice, or None when it has none or its data is a bootstrap source's."""
    latest = group.latest_slice()
    if latest is None or (latest.base_file is not None and latest.base_file.is_bootstrap_skeleton):
        return None
    base = latest.base_file.size if latest.base_file is not None else 0
    return base + sum(log.size for log in latest.log_files)
