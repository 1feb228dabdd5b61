"""Does a table's file layout match its bucket counts, as Hudi's bucket index reads it? (``verify``, and
``plan`` when asked to check records.)

For every live file group: its file id carries a bucket id; that id is below the partition's bucket count;
no other live file group of the partition carries the same id (Hudi's writers fail on that); and every
record of its latest base file hashes to that bucket. The record check reads the latest base files of all
checked partitions in one Spark read, buckets each row in Spark (``bucketing``) and brings back only
per-file counts. The records of MERGE_ON_READ log files are checked too when Hudi's bundle is on the
session (``log_records``); without it they are counted as not read.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from pyspark.sql import functions as F  # noqa: N812 (PySpark's own convention)

from hudi_bucket.bucketing.bucket_ids import placement_stats
from hudi_bucket.core.buckets import bucket_id_from_file_id, check_num_buckets, is_bucket_file_id
from hudi_bucket.core.file_sizes import FileGroupSizes
from hudi_bucket.core.filegroups import FileGroup
from hudi_bucket.core.metafields import RECORD_KEY
from hudi_bucket.core.recordkeys import KeyStyle
from hudi_bucket.core.report_json import JsonObject
from hudi_bucket.errors import InvalidBucketCountError, StorageError
from hudi_bucket.hudi.fs_view import load_file_groups
from hudi_bucket.hudi.table import HudiTable
from hudi_bucket.reading import log_records
from hudi_bucket.reading.source import record_key_column
from hudi_bucket.spark.spark_paths import path_part, spark_root, table_file_uris
from hudi_bucket.storage.base import Storage

if TYPE_CHECKING:
    from pyspark.sql import Row, SparkSession

PartitionBucketCounts = Callable[[str], int] | Mapping[str, int]
"""The bucket count of each partition path: a function (e.g. the rules) or a complete mapping."""


class ViolationKind(StrEnum):
    NOT_A_BUCKET_FILE = "not-a-bucket-file"
    BUCKET_OUT_OF_RANGE = "bucket-out-of-range"
    DUPLICATE_BUCKET = "duplicate-bucket"
    MISPLACED_RECORDS = "misplaced-records"
    MISSING_RECORD_KEY = "missing-record-key"


@dataclass(frozen=True, order=True)
class Violation:
    """One thing wrong with one file group; ``count`` is the number of rows concerned, or 1."""

    partition: str
    file_id: str
    kind: ViolationKind
    detail: str
    count: int = 1

    def to_dict(self) -> JsonObject:
        return {
            "partition": self.partition,
            "fileId": self.file_id,
            "kind": self.kind.value,
            "detail": self.detail,
            "count": self.count,
        }


@dataclass(frozen=True)
class VerifyResult:
    checked_partitions: int
    checked_file_groups: int
    checked_rows: int
    violations: tuple[Violation, ...] = ()
    unread_log_files: int = 0  # of the latest MERGE_ON_READ slices, when their records cannot be read
    sizes: FileGroupSizes = field(
        default_factory=FileGroupSizes
    )  # how evenly the checked groups hold the data

    @property
    def ok(self) -> bool:
        return not self.violations

    def to_dict(self, max_violations: int = 100) -> JsonObject:
        """A report of bounded size: the first ``max_violations`` violations and partitions holding any,
        and totals per kind (the operator reads it as ``contract.reports.LayoutCheck``)."""
        partitions = sorted({v.partition for v in self.violations})
        return {
            "ok": self.ok,
            "checkedPartitions": self.checked_partitions,
            "checkedFileGroups": self.checked_file_groups,
            "checkedRows": self.checked_rows,
            "unreadLogFiles": self.unread_log_files,
            "violationCount": len(self.violations),
            "violationsByKind": dict(sorted(Counter(v.kind.value for v in self.violations).items())),
            "violations": [v.to_dict() for v in self.violations[:max_violations]],
            "truncated": len(self.violations) > max_violations,
            "partitionCount": len(partitions),
            "partitions": list(partitions[:max_violations]),
            "fileGroupSizes": self.sizes.to_dict(),
        }


@dataclass(frozen=True)
class _FileCheck:
    """A latest base file (or the log files of a latest slice) whose records must all hash to ``bucket``
    under ``num_buckets``."""

    partition: str
    file_id: str
    path: str  # relative to the table root (the first log file, for log records)
    bucket: int
    num_buckets: int
    log_files: int = 0  # for log records: how many

    def violation(self, kind: ViolationKind, detail: str, count: int) -> Violation:
        return Violation(self.partition, self.file_id, kind, detail, count)


def verify_table(
    spark: SparkSession,
    storage: Storage,
    table: HudiTable,
    *,
    rules_for_partition: PartitionBucketCounts,
    hash_fields: Collection[str],
    key_style: KeyStyle,
    partitions: Iterable[str] | None = None,
) -> VerifyResult:
    """Check the live file groups of ``partitions`` (all when None) against each partition's bucket count."""
    groups = load_file_groups(storage, table, None if partitions is None else tuple(partitions))
    violations: list[Violation] = []
    checks: list[_FileCheck] = []
    log_checks: list[_FileCheck] = []
    for partition, partition_groups in groups.items():
        num_buckets = _bucket_count(rules_for_partition, partition)
        violations += _layout_violations(partition, partition_groups, num_buckets)
        checks += _file_checks(partition, partition_groups, num_buckets)
        log_checks += _log_checks(partition, partition_groups, num_buckets)
    rows, record_violations = _record_violations(spark, storage, table, checks, hash_fields, key_style)
    unread = sum(len(s.log_files) for gs in groups.values() for g in gs if (s := g.latest_slice()))
    if log_checks and log_records.readable(spark, table):
        log_rows, log_violations = _log_record_violations(spark, storage, log_checks, hash_fields, key_style)
        rows, record_violations = rows + log_rows, record_violations + log_violations
        unread -= sum(c.log_files for c in log_checks)
    return VerifyResult(
        checked_partitions=len(groups),
        checked_file_groups=sum(len(g) for g in groups.values()),
        checked_rows=rows,
        violations=tuple(sorted(violations + record_violations)),
        unread_log_files=unread,
        sizes=FileGroupSizes.of(g for gs in groups.values() for g in gs),
    )


def _bucket_count(counts: PartitionBucketCounts, partition: str) -> int:
    if isinstance(counts, Mapping):
        if partition not in counts:
            raise InvalidBucketCountError(f"no bucket count given for partition {partition!r}")
        count = counts[partition]
    else:
        count = counts(partition)
    check_num_buckets(count)
    return count


def _layout_violations(partition: str, groups: Iterable[FileGroup], num_buckets: int) -> list[Violation]:
    """What is wrong with the file ids alone: no bucket id, a bucket id out of range, a bucket held twice."""
    violations = []
    holders: dict[int, list[str]] = defaultdict(list)
    for group in groups:
        if is_bucket_file_id(group.file_id):
            holders[bucket_id_from_file_id(group.file_id)].append(group.file_id)
        else:
            detail = "the file id does not start with an 8-digit bucket id and '-'"
            violations.append(Violation(partition, group.file_id, ViolationKind.NOT_A_BUCKET_FILE, detail))
    for bucket, file_ids in holders.items():
        for file_id in file_ids:
            if bucket >= num_buckets:
                detail = f"bucket {bucket} is not below the partition's {num_buckets} buckets"
                violations.append(Violation(partition, file_id, ViolationKind.BUCKET_OUT_OF_RANGE, detail))
            if len(file_ids) > 1:
                others = ", ".join(other for other in file_ids if other != file_id)
                detail = f"bucket {bucket} is also held by live file group(s) {others}"
                violations.append(Violation(partition, file_id, ViolationKind.DUPLICATE_BUCKET, detail))
    return violations


def _file_checks(partition: str, groups: Iterable[FileGroup], num_buckets: int) -> list[_FileCheck]:
    return [
        _FileCheck(
            partition, g.file_id, g.latest_base_file.path, bucket_id_from_file_id(g.file_id), num_buckets
        )
        for g in groups
        if is_bucket_file_id(g.file_id) and g.latest_base_file is not None
    ]


def _log_checks(partition: str, groups: Iterable[FileGroup], num_buckets: int) -> list[_FileCheck]:
    return [
        _FileCheck(
            partition,
            g.file_id,
            s.log_files[0].path,
            bucket_id_from_file_id(g.file_id),
            num_buckets,
            len(s.log_files),
        )
        for g in groups
        if is_bucket_file_id(g.file_id) and (s := g.latest_slice()) is not None and s.log_files
    ]


def _log_record_violations(
    spark: SparkSession,
    storage: Storage,
    checks: list[_FileCheck],
    hash_fields: Collection[str],
    key_style: KeyStyle,
) -> tuple[int, list[Violation]]:
    """Log records read, and the file groups whose log records belong to other buckets or have no key."""
    groups = [(c.partition, c.file_id, c.bucket, c.num_buckets) for c in checks]
    return _violations(
        checks, log_records.log_record_stats(spark, storage, groups, hash_fields, key_style), "log records"
    )


def _record_violations(
    spark: SparkSession,
    storage: Storage,
    table: HudiTable,
    checks: list[_FileCheck],
    hash_fields: Collection[str],
    key_style: KeyStyle,
) -> tuple[int, list[Violation]]:
    """Rows read, and the files holding records of another bucket or records without a key."""
    if not checks:
        return 0, []
    return _violations(checks, _per_file_stats(spark, storage, table, checks, hash_fields, key_style), "rows")


def _violations(checks: list[_FileCheck], stats: list[Row], what: str) -> tuple[int, list[Violation]]:
    """Rows checked, and the groups whose ``what`` (rows of the base file, or log records) belong to
    other buckets or have no key, from ``bucketing.placement_stats``."""
    violations = []
    for stat in stats:
        check = checks[stat["group_index"]]
        if stat["misplaced"]:
            example_key, example_bucket = stat["example"]
            detail = (
                f"{stat['misplaced']} of {stat['rows']} {what} belong to other buckets under "
                f"{check.num_buckets} buckets (e.g. key {example_key!r} -> bucket {example_bucket})"
            )
            violations.append(check.violation(ViolationKind.MISPLACED_RECORDS, detail, stat["misplaced"]))
        if stat["missing"]:
            detail = f"{stat['missing']} of {stat['rows']} {what} have no {RECORD_KEY} and cannot be checked"
            violations.append(check.violation(ViolationKind.MISSING_RECORD_KEY, detail, stat["missing"]))
    return sum(stat["rows"] for stat in stats), violations


def _per_file_stats(
    spark: SparkSession,
    storage: Storage,
    table: HudiTable,
    checks: list[_FileCheck],
    hash_fields: Collection[str],
    key_style: KeyStyle,
) -> list[Row]:
    """One Spark read of every checked base file: the ``bucketing.placement_stats`` of each file,
    ``group_index`` its index in ``checks``."""
    paths = [check.path for check in checks]
    uris = table_file_uris(storage, paths)
    if table.config.populate_meta_fields:
        # Only the key is read: a given schema spares a footer read per file and ignores every data column.
        rows, record_key = spark.read.schema(f"{RECORD_KEY} string").parquet(*uris), F.col(RECORD_KEY)
    else:  # virtual keys: the key is built from its fields (only those are read)
        rows, record_key = spark.read.parquet(*uris), record_key_column(table.config)
    indexes = _file_indexes(rows.inputFiles(), path_part(spark_root(storage)), paths)
    files = spark.createDataFrame(
        [(name, index, checks[index].bucket, checks[index].num_buckets) for name, index in indexes.items()],
        "input_file string, group_index int, bucket int, num_buckets int",
    )
    keyed = rows.select(F.input_file_name().alias("input_file"), record_key.alias("key")).join(
        F.broadcast(files), "input_file"
    )
    return placement_stats(keyed, hash_fields, key_style)


def _file_indexes(input_files: Iterable[str], root_path: str, paths: list[str]) -> dict[str, int]:
    """Each file as Spark names it (an encoded URI, as ``input_file_name()`` gives it) -> its index in
    ``paths`` (relative to the root, whose unencoded path is ``root_path``).

    Every file must be found both ways: the record check joins on these names, and a name that matched
    nothing would drop that file's rows without a trace.
    """
    wanted = {path: index for index, path in enumerate(paths)}
    prefix = root_path.rstrip("/") + "/"
    found: dict[str, int | None] = {}
    for name in input_files:
        decoded = unquote(urlparse(name).path)
        found[name] = wanted.get(decoded[len(prefix) :]) if decoded.startswith(prefix) else None
    unmatched = sorted(name for name, index in found.items() if index is None)
    missing = sorted(set(wanted) - {paths[index] for index in found.values() if index is not None})
    if unmatched or missing:
        raise StorageError(
            f"Spark lists other base files than requested: unexpected {unmatched[:3]}, missing {missing[:3]}"
        )
    return {name: index for name, index in found.items() if index is not None}
