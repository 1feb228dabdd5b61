"""The HudiBucketTable the operator tests and its benchmark create, and the resources kmock serves them."""

from __future__ import annotations

TABLES = "hudi.bucketops.io/v1alpha1/hudibuckettables"
APPS = "sparkoperator.k8s.io/v1beta2/sparkapplications"
CONFIG_MAPS = "v1/configmaps"
VERBS = {"list", "watch", "get", "patch", "create", "delete"}
SPEC = {
    "table": {"uri": "s3a://lake/warehouse/orders"},
    "buckets": {"default": 4, "currentBuckets": 4, "rules": [{"pattern": "11-11", "buckets": 16}]},
}

# Where the operator tests' admins let tables be: anywhere on s3a:// or a local path, in every namespace (the
# operator's default is nowhere until the admins say; the policy's own tests try narrower lists).
ANYWHERE = {"*": ("s3a://", "/", "file:/")}
