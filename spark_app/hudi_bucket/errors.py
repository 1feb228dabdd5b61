"""Every error this project raises on purpose: one root, each class says what is wrong and what to do.

The message names the offending thing (file, rule, instant); ``hint`` says what the user can do about it.
The CLI prints both on one line and exits non-zero; the operator maps them onto status conditions.
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


class InvalidRuleError(HudiBucketError, ValueError):
    """A bucket rule or expression list that Hudi would reject or misread."""

    hint = "write rules as 'regex,N;regex,N' with no comma inside a pattern"


class InvalidBucketCountError(HudiBucketError, ValueError):
    """A bucket count outside 1..MAX_BUCKETS."""


class InvalidHashingConfigError(HudiBucketError):
    """A hashing_config file that is not what Hudi writes."""

    hint = "restore the file from backup or roll back the instant that wrote it"


class NotAHudiTableError(HudiBucketError):
    """The path holds no Hudi table."""

    hint = "point --table at the folder that holds .hoodie/hoodie.properties"


class CorruptTableError(HudiBucketError):
    """A table file (hoodie.properties, a timeline instant) cannot be read as Hudi writes it."""

    hint = "repair the table with Hudi's own tools before managing its buckets"


class UnsupportedTableError(HudiBucketError):
    """A table we refuse to manage (e.g. MERGE_ON_READ, an unknown table version)."""


class TableBusyError(HudiBucketError):
    """Pending instants or a concurrent writer: acting now could lose data."""

    hint = "stop the writers and let pending instants finish or roll them back, then retry"


class ConcurrentWriterError(TableBusyError):
    """Another writer committed to the partitions being rescaled; the rescale was rolled back."""

    hint = (
        "nothing was lost and nothing changed; stop the writers (Hudi requires it during a rescale) and retry"
    )


class StorageError(HudiBucketError):
    """A storage operation failed (missing file, refused write)."""


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


class LayoutViolationError(HudiBucketError):
    """`verify` found records or file groups that break the bucket layout."""

    hint = (
        "apply the rules again with --check-records (partitions that violate their layout are repaired), "
        "or roll back the last rescale"
    )

    def __init__(self, message: str, *, result: ReportedResult) -> None:
        super().__init__(message, result=result)


class InvalidTableDefinitionError(HudiBucketError, ValueError):
    """Options for a new table that Hudi would reject or misread (name, version, field names)."""

    hint = "fix the table's name, version, record key, partition and ordering fields, then retry"


class TableMismatchError(HudiBucketError):
    """A write's options contradict what the table records (its bucket count, its ordering fields)."""

    hint = "pass the table's own value"
