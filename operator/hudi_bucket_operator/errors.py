"""Every error the operator raises on purpose, declared once, under one root: ``OperatorError`` (itself a
``HudiBucketError``, so that a hint and the job side's rendering apply alike). The job side's errors are
``hudi_bucket.errors``."""

from __future__ import annotations

from hudi_bucket.errors import HudiBucketError

# Where the admins widen what tables may set (in the hints of the policy's refusals).
_WIDEN = "jobs.allowedSparkConf and jobs.allowedHadoopConf (Helm values)"


class OperatorError(HudiBucketError):
    """Root of the operator's errors."""


# The operator's own setup.


class SettingsError(OperatorError):
    """The operator's environment holds a setting it cannot run with."""

    hint = "fix the operator's environment, which its Helm values set, and start it again"


class PluginError(OperatorError):
    """What `kubectl hbt` cannot do, said to its user (kubectl's own words when kubectl failed)."""


# The Kubernetes API.


class KubeError(OperatorError):
    """A Kubernetes API call failed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"Kubernetes API {status}: {message}")
        self.status = status


class KubeConflictError(KubeError):
    """409: the object exists (create) or changed underneath us."""


class KubeNotFoundError(KubeError):
    """404."""


class KubeLoginError(OperatorError):
    """Neither a pod's service account nor a kubeconfig was found."""

    hint = "run in a pod with a service account, or set KUBECONFIG (or HBO_KUBE_SERVER for an open server)"


# A spec that cannot be reconciled as written: the table stalls with the error's reason.


class ScheduleError(OperatorError, ValueError):
    """Text that is neither an interval nor a cron expression."""


class InvalidSpecError(OperatorError):
    """The HudiBucketTable spec cannot be reconciled as written."""

    hint = "fix the spec (kubectl edit, or in Git); nothing runs until then"

    @classmethod
    def reason(cls) -> str:
        """The reason the table stalls with: the error's name without "Error" (InvalidSpec, and for each
        refusal of the admins' policy its own, ImageNotAllowed, ...)."""
        return cls.__name__.removesuffix("Error")


# The admins' policy (Helm values) refuses what a spec asks.


class ImageNotAllowedError(InvalidSpecError):
    """spec.spark.image is not on the operator's allowlist of job images."""

    hint = (
        "leave spec.spark.image empty for the operator's default image, use one the allowlist admits, "
        "or ask the operator's admins to extend allowedImages (Helm values)"
    )


class ServiceAccountNotAllowedError(InvalidSpecError):
    """spec.spark.serviceAccount is neither the operator's job account nor one its admins allow."""

    hint = (
        "leave spec.spark.serviceAccount empty for the operator's job account, or ask the operator's "
        "admins to list this one in jobs.allowedServiceAccounts (Helm values)"
    )


class SettingNotAllowedError(InvalidSpecError):
    """spec.spark sets Spark or Hadoop settings a table may not set, or values they do not take."""

    hint = (
        "remove them from spec.spark or give each a value it takes; the operator's admins may allow "
        "settings the operator does not set and that hold no credential, as exact keys or prefixes ending "
        f"in '.', in {_WIDEN}"
    )


class SecretNotAllowedError(InvalidSpecError):
    """spec.spark.envFromSecrets names a Secret the admins do not let tables of its namespace use."""

    hint = (
        "ask the operator's admins to list the Secret for this namespace in jobs.allowedSecrets (Helm values)"
    )


class TableUriNotAllowedError(InvalidSpecError):
    """spec.table.uri is not under a location the admins allow for its namespace."""

    hint = (
        "give the table's base path under a location the admins allow, or ask them to add it to "
        "jobs.allowedTableUris for this namespace (Helm values)"
    )


class WriterNotAllowedError(InvalidSpecError):
    """spec.writers asks the operator to pause workloads in a way its admins do not allow."""

    hint = "change spec.writers, or ask the operator's admins (Helm values writers)"


class ResourcesNotAllowedError(InvalidSpecError):
    """spec.spark asks for a driver or executors larger than the admins allow."""

    hint = "ask for less, or ask the operator's admins to raise jobs.limits (Helm values)"


class ScheduleNotAllowedError(InvalidSpecError):
    """A table's schedule (spec.verify.schedule, spec.buckets.sizing.replanEvery) runs jobs more often than
    the admins allow."""

    hint = (
        "schedule it less often, or ask the operator's admins to lower jobs.limits.minInterval (Helm values)"
    )
