"""What a spec may ask of the operator's jobs (pure: no I/O).

The operator's admins set the defaults and bounds (Helm values, ``JobDefaults``); a spec may choose an
image under an allowed prefix, Spark settings the operator does not own, and sane resources. ``decide``
checks this before it chooses to run a job, so a bad choice is one Stalled decision with one event; the
renderer resolves the same settings into the manifest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from hudi_bucket_operator import images
from hudi_bucket_operator.spec import InvalidSpecError, Resources, SparkSettings

# sparkConf keys the operator owns: each would bypass the image allowlist, the namespace, the service
# account or the pod the operator renders.
_RESERVED_CONF = re.compile(
    r"spark\.kubernetes\.(container\.image|driver\.container\.image|executor\.container\.image"
    r"|namespace|driver\.podTemplateFile|executor\.podTemplateFile|authenticate\..*)"
    r"|spark\.master|spark\.submit\.deployMode"
)
# Keys whose values are credentials: they belong in a Secret, not in a manifest.
_CREDENTIAL_KEY = re.compile(
    r"secret|password|passwd|access\.key|session\.token|account\.key|private\.key|sas\.token",
    re.IGNORECASE,
)
# What Spark's JavaUtils.byteStringAs reads: 512m, 2g, 4096 (bytes) ...; not Kubernetes' 2Gi.
_SPARK_MEMORY = re.compile(r"[0-9]+([kmgtp]b?|b)?", re.IGNORECASE)


class ImageNotAllowedError(InvalidSpecError):
    """spec.spark.image is not on the operator's allowlist of job images."""

    hint = (
        "leave spec.spark.image empty for the operator's default image, use one the allowlist admits, "
        "or ask the operator's admins to extend allowedImages (Helm values)"
    )


@dataclass(frozen=True)
class JobDefaults:
    """The operator's settings for every job (Helm values); a spec overrides the fields it sets.

    ``allowed_images``: what a spec may choose besides ``image`` (see ``image_allowed``).
    """

    image: str
    spark_version: str
    service_account: str = "hudi-bucket-jobs"
    main_application_file: str = "local:///opt/hudi-bucket-operator/main.py"
    ttl_seconds: int = 86400
    driver: Resources = field(default_factory=lambda: Resources(cores=1, memory="2g"))
    executor: Resources = field(default_factory=lambda: Resources(cores=1, memory="2g", instances=1))
    image_pull_policy: str = "IfNotPresent"
    allowed_images: tuple[str, ...] = ()
    spark_conf: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        missing = [
            name
            for name in ("image", "spark_version", "service_account", "main_application_file")
            if not getattr(self, name)
        ]
        if missing:
            raise ValueError(f"JobDefaults needs {', '.join(missing)} (the operator's Helm values)")
        if self.image_pull_policy not in ("Always", "IfNotPresent", "Never"):
            raise ValueError(
                f"JobDefaults.image_pull_policy {self.image_pull_policy!r} is not a Kubernetes one"
            )
        if self.ttl_seconds < 0:
            raise ValueError(f"JobDefaults.ttl_seconds must be >= 0, not {self.ttl_seconds}")
        if bad := [entry for entry in self.allowed_images if not images.valid_entry(entry)]:
            raise ValueError(
                f"JobDefaults: jobs.allowedImages {bad}: not an image reference or prefix (the operator's "
                "Helm values)"
            )


def image_allowed(image: str, defaults: JobDefaults) -> bool:
    """Whether a spec may run ``image``: the default image, or one an entry of the allowlist admits
    (see ``images.admits`` for the rule)."""
    return image == defaults.image or any(images.admits(entry, image) for entry in defaults.allowed_images)


@dataclass(frozen=True)
class JobSettings:
    """What a job runs with: the spec's choices over the operator's defaults."""

    image: str
    driver: Resources
    executor: Resources
    ttl_seconds: int


def job_settings(spark: SparkSettings, defaults: JobDefaults) -> JobSettings:
    """The settings a job of this spec runs with; ImageNotAllowedError for an image off the allowlist,
    else InvalidSpecError naming every problem of spec.spark that keeps the job from running."""
    image = spark.image or defaults.image
    if not image_allowed(image, defaults):
        malformed = "" if images.reference(image) else " (not a lower-case image reference)"
        raise ImageNotAllowedError(
            f"spec.spark.image {image!r} is not allowed{malformed}: this operator runs its default "
            f"image {defaults.image!r} and the images its allowlist admits {list(defaults.allowed_images)}"
        )
    driver = spark.driver.over(defaults.driver)
    executor = spark.executor.over(defaults.executor)
    ttl = defaults.ttl_seconds if spark.ttl_seconds is None else spark.ttl_seconds
    problems = _conf_problems(spark) + _resource_problems(driver, executor, ttl)
    if problems:
        raise InvalidSpecError("; ".join(problems))
    return JobSettings(image, driver, executor, ttl)


def _conf_problems(spark: SparkSettings) -> list[str]:
    problems = []
    reserved = sorted(key for key in spark.spark_conf if _RESERVED_CONF.fullmatch(key))
    if reserved:
        problems.append(
            f"spec.spark.sparkConf must not set {reserved}: the operator sets them "
            "(use spec.spark.image and spec.spark.serviceAccount)"
        )
    for where, conf in (("sparkConf", spark.spark_conf), ("hadoopConf", spark.hadoop_conf)):
        inline = sorted(
            key for key in conf if _CREDENTIAL_KEY.search(key) and not key.startswith("spark.kubernetes.")
        )
        if inline:
            problems.append(
                f"spec.spark.{where} holds credentials {inline}: put them in a Secret and name it in "
                "spec.spark.envFromSecrets (e.g. AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY for s3a)"
            )
    return problems


def _resource_problems(driver: Resources, executor: Resources, ttl: object) -> list[str]:
    problems = []
    for where, res in (("driver", driver), ("executor", executor)):
        if isinstance(res.cores, bool) or not isinstance(res.cores, int) or res.cores < 1:
            problems.append(f"spec.spark.{where}.cores must be an integer >= 1, not {res.cores!r}")
        if not isinstance(res.memory, str) or not _SPARK_MEMORY.fullmatch(res.memory):
            problems.append(
                f"spec.spark.{where}.memory must be a Spark size such as 512m or 4g, not {res.memory!r}"
            )
    if (
        isinstance(executor.instances, bool)
        or not isinstance(executor.instances, int)
        or executor.instances < 1
    ):
        problems.append(f"spec.spark.executor.instances must be an integer >= 1, not {executor.instances!r}")
    if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 0:
        problems.append(f"spec.spark.ttlSeconds must be an integer >= 0, not {ttl!r}")
    return problems
