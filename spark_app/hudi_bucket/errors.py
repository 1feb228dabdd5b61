"""Every error this project raises on purpose: one root, each class says what is wrong and what to do.

The message names the offending thing (file, rule, instant); ``hint`` says what the user can do about it.
The CLI prints both on one line and exits non-zero; the operator maps them onto status conditions
(a report's ``error.type`` is the class's name).

Every public error is here, whichever layer raises it, so that this is the lowest layer and imports
nothing of the job's at run time. Exceptions that never leave the module pair that raises and catches
them stay beside it, outside this root: they are control flow, not errors a user sees
(``storage.native_s3.NotCarriedOverError``: S3A is set up in a way the native lister does not copy, so
S3A lists; ``report_sink._TransientError``: a ConfigMap write worth another attempt;
``writing.staged_write.SplitFileError`` and ``writing.direct_write.TwoWritersError``: turned into a
``BucketWriteError`` by ``writing.bucket_files``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hudi_bucket.core.report_json import ReportedResult


class HudiBucketError(Exception):
    """Root of all errors raised on purpose by hudi-bucket-operator."""

    hint: str = ""
    # What the command found before it failed, for its report (a verify's violations, an apply's new plan).
    result: ReportedResult | None

    def __init__(
        self, message: str, *, hint: str | None = None, result: ReportedResult | None = None
    ) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint
        self.result = result

    def __str__(self) -> str:
        message = super().__str__()
        return f"{message} ({self.hint})" if self.hint else message


# --- the request: rules, configs, sizing, a new table's definition


class InvalidRuleError(HudiBucketError, ValueError):
    """A bucket rule or expression list that Hudi would reject or misread."""

    hint = "write rules as 'regex,N;regex,N' with no comma inside a pattern"


class InvalidBucketCountError(HudiBucketError, ValueError):
    """A bucket count outside 1..MAX_BUCKETS."""


class InvalidHashingConfigError(HudiBucketError):
    """A hashing_config file that is not what Hudi writes."""

    hint = "restore the file from backup or roll back the instant that wrote it"


class SizingError(HudiBucketError):
    """The sizing policy cannot be applied as given."""

    hint = "fix spec.buckets.sizing (or the --target-file-size options)"


class TooManyRulesError(SizingError):
    """The sized counts need more rules than the rule limit leaves."""


class InvalidTableDefinitionError(HudiBucketError, ValueError):
    """Options for a new table that Hudi would reject or misread (name, version, field names)."""

    hint = "fix the table's name, version, record key, partition and ordering fields, then retry"


class TableMismatchError(HudiBucketError):
    """A write's options contradict what the table records (its bucket count, its ordering fields)."""

    hint = "pass the table's own value"


class SourceSchemaError(HudiBucketError):
    """The dataset's columns do not match the table's."""

    hint = "select the table's columns (same names) from the dataset; schema evolution is not supported here"


# --- the table: what it is and who else writes it


class NotAHudiTableError(HudiBucketError):
    """The path holds no Hudi table."""

    hint = "point --table at the folder that holds .hoodie/hoodie.properties"


class CorruptTableError(HudiBucketError):
    """A table file (hoodie.properties, a timeline instant) cannot be read as Hudi writes it."""

    hint = "repair the table with Hudi's own tools before managing its buckets"


class UnsupportedTableError(HudiBucketError):
    """A table we refuse to manage (e.g. MERGE_ON_READ, an unknown table version)."""


class HudiReaderMissingError(UnsupportedTableError):
    """The table holds file slices only Apache Hudi's reader reads, and its bundle is not on the session."""

    hint = (
        "run the job where Apache Hudi's Spark bundle is on the classpath: the job image carries it; "
        "locally, name its jar in HBO_HUDI_BUNDLE (./dev hudi-bundle prints it)"
    )


class RecordedSchemaError(HudiBucketError):
    """The table's recorded schema lacks fields its records are keyed, partitioned or ordered by."""

    hint = "nothing was written; have Hudi record the table's schema (a write with Hudi does), then retry"


class TableBusyError(HudiBucketError):
    """Pending instants or a concurrent writer: acting now could lose data."""

    hint = "stop the writers and let pending instants finish or roll them back, then retry"


class ConcurrentWriterError(TableBusyError):
    """Another writer committed to the partitions being rescaled; the rescale was rolled back."""

    hint = (
        "nothing was lost and nothing changed; stop the writers (Hudi requires it during a rescale) and retry"
    )


class AnotherJobRunningError(TableBusyError):
    """A job of ours is writing the table right now (its instant is pending and its heartbeat alive)."""


class RolledBackByAnotherWriterError(TableBusyError):
    """Another writer rolled our pending instant back while we wrote it; we committed nothing."""

    hint = (
        "nothing was committed and our files were removed; stop Hudi writers during a rescale (or give them "
        "hoodie.cleaner.policy.failed.writes=LAZY, which respects our heartbeat), then retry"
    )


class StorageError(HudiBucketError):
    """A storage operation failed (missing file, refused write)."""


# --- planning and its checks


class PlanError(HudiBucketError):
    """A plan that cannot be made from the options given, or a plan report that cannot be trusted."""


class PlanNotApprovedError(PlanError):
    """The plan an apply found is not the one approved (the table changed since): its result is that plan,
    for approval."""

    hint = "the table or the rules changed since approval; review the new plan and approve its id"


class NotBucketIndexedError(PlanError):
    """Partitions whose file groups are not bucket file groups, while no conversion was asked for."""

    hint = "pass --convert to lay every partition out in buckets (each non-empty partition is rewritten)"


class PreflightError(HudiBucketError):
    """Table state that makes a rewrite unsafe; ``problems`` lists each one with its fix."""

    hint = "nothing was written; fix each problem listed, then retry"

    def __init__(self, message: str, *, hint: str | None = None, problems: tuple[str, ...] = ()) -> None:
        super().__init__(message, hint=hint)
        self.problems = problems


class CustomMergeError(HudiBucketError):
    """Keys in two file groups of a table whose merge is custom code: which copy wins is that code's call."""

    hint = (
        "nothing was committed; keep one copy of each key with Hudi itself (e.g. delete the stray copies, "
        "then upsert the version to keep), then apply again; a conversion may also keep every copy "
        "(--keep-duplicates)"
    )


class LayoutViolationError(HudiBucketError):
    """`verify` found records or file groups that break the bucket layout."""

    hint = (
        "apply the rules again with --check-records (partitions that violate their layout are repaired), "
        "or roll back the last rescale"
    )

    def __init__(self, message: str, *, result: ReportedResult) -> None:
        super().__init__(message, result=result)


# --- the rewrite: reading, writing, Hudi's engine


class HudiReadError(HudiBucketError):
    """Apache Hudi's own reader failed on partitions it had to read; nothing was committed."""

    hint = "nothing was committed; the table is as it was"


class BucketWriteError(HudiBucketError):
    """Rows of one bucket reached more than one task: the input was not laid out as promised."""

    hint = "the old layout is not bucket-correct; run `verify`, then apply with a full shuffle"


class IncompleteRewriteError(HudiBucketError):
    """The files a rewrite wrote lack a column of the table's schema or a record it read."""

    hint = "nothing was committed (the instant was rolled back, the table is as it was); report this with the job log"


class HudiEngineUnavailableError(HudiBucketError):
    """The Hudi engine was chosen, but the job's Spark session cannot run Hudi's procedures."""

    hint = (
        "run the job image that carries Hudi's Spark bundle (locally: HBO_HUDI_BUNDLE names the jar, "
        "`./dev hudi-bundle` fetches it), or choose engine Native for a copy-on-write table without a "
        "live metadata table"
    )


class HudiEngineError(HudiBucketError):
    """Hudi's procedure did not do what was planned."""

    hint = "see the driver log for Hudi's own message; the table is as Hudi left it (its timeline tells)"


# --- the report the operator reads


class ReportError(HudiBucketError):
    """A report that is not what this release's jobs write (another release's, or a damaged one)."""

    hint = "run the job image released with this operator, then retry the job (the retry annotation)"
