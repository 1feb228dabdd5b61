"""The HudiBucketTable CRD's admission, and manifests it admits or refuses, shared by the operator tests.

``ADMISSION`` plays the API server's part for this CRD (see k8s_schema). test_crd.py checks that it
admits ``GOOD_MANIFESTS`` and refuses each of ``BAD_MANIFESTS`` saying why; test_spec.py sends the same
manifests through parse_spec, which must agree.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest
import yaml

from hudi_bucket.core.rules import MAX_BUCKETS, MAX_RULES
from hudi_bucket_operator.resource.api import GROUP, PLURAL, VERSION
from lib import k8s_schema
from lib.paths import REPO

CRD_PATH = REPO / "crds" / f"{PLURAL}.{GROUP}.yaml"
CRD: dict[str, Any] = yaml.safe_load(CRD_PATH.read_text())
VERSION_DOC = k8s_schema.crd_version(CRD_PATH, VERSION)
SCHEMA: dict[str, Any] = VERSION_DOC["schema"]["openAPIV3Schema"]
SPEC_SCHEMA: dict[str, Any] = SCHEMA["properties"]["spec"]
ADMISSION = k8s_schema.Admission(SCHEMA)

EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
PLAN_ID = "sha256:" + "3f9a" * 16

# Three realistic manifests: a small table, a table with skewed days, a plan-then-approve upgrade.
SMALL = yaml.safe_load(
    """
    apiVersion: hudi.bucketops.io/v1alpha1
    kind: HudiBucketTable
    metadata: {name: customers, namespace: lake}
    spec:
      table: {uri: s3a://lake/warehouse/customers}
      buckets:
        default: 4
        rules:
          - {pattern: '^region=emea$', buckets: 8}
    """
)
SKEWED_DAYS = yaml.safe_load(
    r"""
    apiVersion: hudi.bucketops.io/v1alpha1
    kind: HudiBucketTable
    metadata: {name: orders, namespace: lake}
    spec:
      table: {uri: s3a://lake/warehouse/orders, hashFields: [order_id]}
      buckets:
        default: 16
        rule: regex
        rules:                                  # first match wins
          - {pattern: '\d{4}-(06-(01|17|18)|11-(01|10|11))', buckets: 256}
          - {pattern: '\d{4}-12-(24|25|31)', buckets: 128}
          - {pattern: '^dt=2019-', buckets: 4}
      apply: {policy: Automatic}
      metadataTable: Disable
      spark:
        image: registry.example.com/hudi-bucket-job:0.1.0
        sparkVersion: "4.0.1"
        serviceAccount: hudi-bucket-jobs
        driver: {cores: 1, memory: 2g}
        executor: {instances: 8, cores: 4, memory: 16g}
        sparkConf: {spark.sql.shuffle.partitions: "2048"}
        hadoopConf: {fs.s3a.endpoint: "https://s3.eu-west-1.amazonaws.com"}
        envFromSecrets: [{name: lake-s3}]
        ttlSeconds: 86400
    """
)
PLAN_THEN_APPROVE = yaml.safe_load(
    f"""
    apiVersion: hudi.bucketops.io/v1alpha1
    kind: HudiBucketTable
    metadata: {{name: events, namespace: analytics}}
    spec:
      table: {{uri: "hdfs://namenode:8020/warehouse/events", keyStyle: Hudi0x}}
      buckets:
        default: 8
        currentBuckets: 8                       # a plain bucket-index table, upgraded in place
        rules:
          - {{pattern: 'event_type=(click|view)', buckets: 64}}
      apply: {{policy: Manual, approvedPlan: "{PLAN_ID}"}}
    """
)
SIZED = yaml.safe_load(
    r"""
    apiVersion: hudi.bucketops.io/v1alpha1
    kind: HudiBucketTable
    metadata: {name: clicks, namespace: lake}
    spec:
      table: {uri: s3a://lake/warehouse/clicks}
      buckets:
        default: 4
        rules:
          - {pattern: '-11-11$', buckets: 64}   # wins over sizing
        sizing: {targetFileSize: 512Mi, minBuckets: 1, maxBuckets: 256, partitions: '^day=', tolerance: 2,
                 replanEvery: 24h}
    """
)
WITH_WRITERS = yaml.safe_load(
    """
    apiVersion: hudi.bucketops.io/v1alpha1
    kind: HudiBucketTable
    metadata: {name: orders, namespace: lake}
    spec:
      table: {uri: s3a://lake/warehouse/orders}
      buckets: {default: 16, rules: [{pattern: '-11-11$', buckets: 256}]}
      apply:
        policy: Automatic
        window: {schedule: "0 1 * * *", duration: 3h}   # nightly, 01:00-04:00 UTC
      writers:
        quiesceTimeout: 15m
        workloads:
          - {kind: Deployment, name: orders-ingest}
          - {kind: FlinkDeployment, name: orders-cdc}   # suspended as the operator's admins declare
    """
)
GOOD_MANIFESTS = {
    "small": SMALL,
    "skewed-days": SKEWED_DAYS,
    "plan-then-approve": PLAN_THEN_APPROVE,
    "sized": SIZED,
    "with-writers": WITH_WRITERS,
}


def with_spec(manifest: Mapping[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``manifest`` with ``spec.<path>`` (dotted) set to ``value``."""
    changed = copy.deepcopy(dict(manifest))
    *parents, leaf = ["spec", *path.split(".")]
    node = changed
    for key in parents:
        node = node.setdefault(key, {})
    node[leaf] = value
    return changed


def without_spec(manifest: Mapping[str, Any], path: str) -> dict[str, Any]:
    """A copy of ``manifest`` without ``spec.<path>`` (dotted)."""
    changed = copy.deepcopy(dict(manifest))
    *parents, leaf = ["spec", *path.split(".")]
    node = changed
    for key in parents:
        node = node[key]
    del node[leaf]
    return changed


def rules_of(*rules: tuple[str, int]) -> list[dict[str, Any]]:
    return [{"pattern": pattern, "buckets": buckets} for pattern, buckets in rules]


# Manifests admission must refuse: (manifest, a fragment of the error that says so). test_spec.py sends
# the same specs through parse_spec, by id.
_SUBSTITUTED = "must not hold '${' (Spark SQL, Spark and Hadoop replace ${...} with the job's environment"
BAD_MANIFESTS = [
    # No '${' nor control character in text that reaches a job or a view (Spark SQL would substitute it;
    # a terminal obeys an escape sequence).
    pytest.param(
        with_spec(SMALL, "table.uri", "s3a://lake/team-a/${env:AWS_SECRET_ACCESS_KEY}"),
        f"spec.table.uri {_SUBSTITUTED}",
        id="uri-substitution",
    ),
    pytest.param(
        with_spec(SMALL, "table.uri", "s3a://lake/team-a/\x1b[2Jt"),
        f"spec.table.uri {_SUBSTITUTED}",
        id="uri-escape",
    ),
    pytest.param(
        with_spec(SMALL, "buckets.rules", [{"pattern": "[${env:AWS_SECRET_ACCESS_KEY}]", "buckets": 2}]),
        f"a rule's pattern {_SUBSTITUTED}",
        id="pattern-substitution",
    ),
    pytest.param(
        with_spec(SMALL, "buckets.rules", [{"pattern": "^a\x1b[2J\x1b[Hfake plan$", "buckets": 2}]),
        f"a rule's pattern {_SUBSTITUTED}",
        id="pattern-terminal-escape",
    ),
    pytest.param(
        with_spec(SMALL, "table.hashFields", ["order_id${sparkconf:spark.hadoop.fs.s3a.secret.key}"]),
        f"a hash field name {_SUBSTITUTED}",
        id="hash-field-substitution",
    ),
    pytest.param(
        with_spec(SIZED, "buckets.sizing.partitions", "day=${env:HOME}"),
        f"spec.buckets.sizing.partitions {_SUBSTITUTED}",
        id="sizing-partitions-substitution",
    ),
    pytest.param(
        with_spec(SMALL, "spark.sparkVersion", "3.5.8${env:X}"),
        "spec.spark.sparkVersion must be a version such as 3.5.8",
        id="spark-version-substitution",
    ),
    pytest.param(
        with_spec(SIZED, "buckets.sizing", {"minBuckets": 2}),
        "'targetFileSize' is a required property",
        id="sizing-without-target",
    ),
    pytest.param(
        with_spec(SIZED, "buckets.sizing.targetFileSize", "512MB"),
        "targetFileSize must be a size in bytes or a Kubernetes quantity",
        id="sizing-target-not-a-quantity",
    ),
    pytest.param(
        with_spec(SIZED, "buckets.sizing.targetFileSize", 0),
        "targetFileSize must be a size in bytes or a Kubernetes quantity",
        id="sizing-target-zero",
    ),
    pytest.param(
        with_spec(with_spec(SIZED, "buckets.sizing.minBuckets", 64), "buckets.sizing.maxBuckets", 8),
        "spec.buckets.sizing.minBuckets must not be above maxBuckets",
        id="sizing-min-above-max",
    ),
    pytest.param(
        with_spec(SIZED, "buckets.sizing.replanEvery", "1 day"),
        "spec.buckets.sizing.replanEvery must be a duration such as 30s, 90m, 1h30m",
        id="sizing-replan-every-words",
    ),
    pytest.param(
        with_spec(SIZED, "buckets.sizing.tolerance", 1),
        "less than or equal to the minimum of 1",
        id="sizing-tolerance-one",
    ),
    pytest.param(with_spec(SMALL, "table.path", "/x"), "'path' was unexpected", id="unknown-field"),
    pytest.param(without_spec(SMALL, "table"), "'table' is a required property", id="missing-table"),
    pytest.param(without_spec(SMALL, "table.uri"), "'uri' is a required property", id="missing-uri"),
    pytest.param(with_spec(SMALL, "table.uri", " \t"), "spec.table.uri must not be blank", id="blank-uri"),
    pytest.param(
        with_spec(SMALL, "buckets.default", 0),
        "spec.buckets.default must be a bucket count from 1 to 100000",
        id="default-zero",
    ),
    pytest.param(
        with_spec(SMALL, "buckets.default", MAX_BUCKETS + 1),
        "spec.buckets.default must be a bucket count from 1 to 100000",
        id="default-too-large",
    ),
    pytest.param(
        with_spec(SMALL, "buckets.rules", rules_of(("dt=2025", 0))),
        "a rule's buckets must be a bucket count from 1 to 100000",
        id="rule-buckets-zero",
    ),
    pytest.param(
        with_spec(SMALL, "buckets.rules", rules_of(("dt=2025", MAX_BUCKETS + 1))),
        "a rule's buckets must be a bucket count from 1 to 100000",
        id="rule-buckets-too-large",
    ),
    pytest.param(
        with_spec(SMALL, "buckets.rules", rules_of((r"\d{2,3}", 8))),
        "a rule's pattern cannot contain ','",
        id="comma-in-pattern",
    ),
    pytest.param(
        with_spec(SMALL, "buckets.rules", rules_of(("a;b", 8))),
        "a rule's pattern cannot contain ';'",
        id="semicolon-in-pattern",
    ),
    pytest.param(
        with_spec(SMALL, "buckets.rules", rules_of(("dt=2025 ", 8))),
        "a rule's pattern cannot start or end with whitespace",
        id="pattern-ends-with-space",
    ),
    pytest.param(
        with_spec(SMALL, "buckets.rules", rules_of(("", 8))),
        "should be non-empty",
        id="empty-pattern",
    ),
    pytest.param(
        with_spec(SMALL, "buckets.rules", rules_of(("x" * 513, 8))),
        "is too long",
        id="pattern-too-long",
    ),
    pytest.param(
        with_spec(SMALL, "buckets.rules", rules_of(*[(f"^d={i}$", 8) for i in range(MAX_RULES + 1)])),
        "is too long",
        id="too-many-rules",
    ),
    pytest.param(with_spec(SMALL, "buckets.rules", []), "should be non-empty", id="no-rules"),
    pytest.param(
        without_spec(SMALL, "buckets.rules"),
        "spec.buckets.rules has no rules: give at least one",
        id="missing-rules",
    ),
    pytest.param(
        with_spec(SMALL, "buckets.rules", ["^region=emea$,8"]),
        "is not of type 'object'",
        id="rule-as-string",
    ),
    pytest.param(with_spec(SMALL, "buckets.rule", "glob"), "'glob' is not one of ['regex']", id="rule-type"),
    pytest.param(
        with_spec(SMALL, "buckets.rule", "REGEX"), "'REGEX' is not one of ['regex']", id="rule-type-case"
    ),
    pytest.param(
        with_spec(SMALL, "buckets.currentBuckets", 0),
        "spec.buckets.currentBuckets must be a bucket count from 1 to 100000",
        id="current-buckets-zero",
    ),
    pytest.param(
        with_spec(SMALL, "buckets.convert", "false"), "'false' is not of type 'boolean'", id="convert-string"
    ),
    pytest.param(
        with_spec(with_spec(SMALL, "buckets.convert", True), "buckets.currentBuckets", 16),
        "spec.buckets.convert and spec.buckets.currentBuckets cannot both be set",
        id="convert-with-current-buckets",
    ),
    pytest.param(
        with_spec(SMALL, "table.hashFields", ["id,name"]),
        "a hash field name cannot contain ','",
        id="comma-in-hash-field",
    ),
    pytest.param(with_spec(SMALL, "table.hashFields", [""]), "should be non-empty", id="empty-hash-field"),
    pytest.param(
        with_spec(SMALL, "table.hashFields", "id"), "'id' is not of type 'array'", id="hash-fields-string"
    ),
    pytest.param(with_spec(SMALL, "table.keyStyle", "1.x"), "'1.x' is not one of", id="key-style"),
    pytest.param(with_spec(SMALL, "apply", "Manual"), "'Manual' is not of type 'object'", id="apply-string"),
    pytest.param(with_spec(SMALL, "apply.policy", "Auto"), "'Auto' is not one of", id="policy"),
    pytest.param(
        with_spec(SMALL, "apply.approvedPlan", "3f9a" * 16),
        "spec.apply.approvedPlan must be a plan id as shown in status.plan.id",
        id="approved-plan-without-prefix",
    ),
    pytest.param(with_spec(SMALL, "metadataTable", "Ignore"), "'Ignore' is not one of", id="metadata-table"),
    pytest.param(with_spec(SMALL, "spark", ["image"]), "is not of type 'object'", id="spark-list"),
    pytest.param(
        with_spec(SMALL, "spark.executor", {"memory": "4Gi"}),
        "memory must use Spark's format",
        id="executor-memory-quantity",
    ),
    pytest.param(
        with_spec(SMALL, "spark.driver", {"memory": "lots"}),
        "memory must use Spark's format",
        id="driver-memory-word",
    ),
    pytest.param(
        with_spec(SMALL, "spark.driver", {"cores": "two"}),
        "'two' is not of type 'integer'",
        id="driver-cores-word",
    ),
    pytest.param(
        with_spec(SMALL, "spark.executor", {"instances": 0}),
        "0 is less than the minimum of 1",
        id="no-executors",
    ),
    pytest.param(
        with_spec(SMALL, "spark.serviceAccount", "Hudi_Jobs"),
        "spec.spark.serviceAccount must be a ServiceAccount name",
        id="service-account-name",
    ),
    pytest.param(
        with_spec(SMALL, "spark.envFromSecrets", [{"name": "Lake_S3"}]),
        "spec.spark.envFromSecrets[].name must be a Secret name",
        id="secret-name",
    ),
    pytest.param(
        with_spec(SMALL, "spark.envFromSecrets", [{}]),
        "'name' is a required property",
        id="secret-without-name",
    ),
    pytest.param(
        with_spec(SMALL, "spark.sparkConf", {"spark.sql.shuffle.partitions": 2048}),
        "2048 is not of type 'string'",
        id="spark-conf-number",
    ),
    pytest.param(
        with_spec(SMALL, "spark.sparkConf", {f"spark.k{i}": "v" for i in range(101)}),
        "has too many properties",
        id="too-many-spark-conf",
    ),
    pytest.param(
        with_spec(SMALL, "spark.sparkConf", {"spark.master": "local[*]"}),
        "spec.spark.sparkConf must not set what the operator sets for every job",
        id="spark-conf-owned-key",
    ),
    pytest.param(
        with_spec(
            SMALL, "spark.sparkConf", {"spark.kubernetes.authenticate.driver.serviceAccountName": "admin"}
        ),
        "spec.spark.sparkConf must not set what the operator sets for every job",
        id="spark-conf-owned-prefix",
    ),
    pytest.param(
        with_spec(SMALL, "spark.sparkConf", {"spark.master=k8s://https://evil.example": "x"}),
        "spec.spark.sparkConf's keys must be settings' names",
        id="spark-conf-key-with-equals",
    ),
    pytest.param(
        with_spec(SMALL, "spark.hadoopConf", {"fs.s3a.endpoint ": "x"}),
        "spec.spark.hadoopConf's keys must be settings' names",
        id="hadoop-conf-key-with-space",
    ),
    pytest.param(
        with_spec(SMALL, "spark.image", "registry.example.com/Hudi-Bucket-Job:0.1.0"),
        "spec.spark.image must be an image reference",
        id="image-upper-case",
    ),
    pytest.param(
        # How a kind is suspended is the admins' to say (Helm values), never a table's.
        with_spec(
            WITH_WRITERS,
            "writers.workloads",
            [{"kind": "FlinkDeployment", "name": "x", "suspend": {"path": "spec.job.jarURI"}}],
        ),
        "'suspend' was unexpected",
        id="writer-with-suspend",
    ),
    pytest.param(
        with_spec(WITH_WRITERS, "writers.workloads", [{"kind": "deployment", "name": "x"}]),
        "'deployment' does not match",
        id="writer-kind-lower-case",
    ),
    pytest.param(
        with_spec(SMALL, "spark.sparkConf", {"spark.sql.shuffle.partitions": "${env:AWS_SECRET_ACCESS_KEY}"}),
        "spec.spark.sparkConf's values must not hold '${'",
        id="spark-conf-substitution",
    ),
    pytest.param(
        with_spec(SMALL, "spark.hadoopConf", {"fs.s3a.connection.maximum": "${env.password}"}),
        "spec.spark.hadoopConf's values must not hold '${'",
        id="hadoop-conf-substitution",
    ),
    pytest.param(
        with_spec(WITH_WRITERS, "apply.window", {"schedule": "6h", "duration": "1h"}),
        "'6h' does not match",
        id="window-interval",
    ),
    pytest.param(with_spec(SMALL, "spark.ttlSeconds", "1d"), "'1d' is not of type 'integer'", id="ttl-word"),
    pytest.param(
        with_spec(SMALL, "spark.ttlSeconds", -1), "-1 is less than the minimum of 0", id="ttl-negative"
    ),
]
