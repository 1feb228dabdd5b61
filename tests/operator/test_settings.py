"""The operator's settings: read from the environment, each bad value refused at start with its variable,
what it must be and the value found; and the Helm chart sets exactly these, with the same defaults."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BeforeValidator

from hudi_bucket_operator.cli import main
from hudi_bucket_operator.errors import SettingsError
from hudi_bucket_operator.policy.job_defaults import JobDefaults
from hudi_bucket_operator.policy.job_policy import Policy
from hudi_bucket_operator.policy.placement import PodPlacement, Toleration
from hudi_bucket_operator.resource.schedule import parse_duration
from hudi_bucket_operator.runtime.settings import (
    HELM,
    HELM_VALUES,
    VARIABLES,
    OperatorConfig,
    reference,
)
from lib.paths import REPO

CHART = REPO / "charts" / "hudi-bucket-operator"
DEPLOYMENT = (CHART / "templates" / "deployment.yaml").read_text()
HELPERS = (CHART / "templates" / "_helpers.tpl").read_text()
VALUES = yaml.safe_load((CHART / "values.yaml").read_text())
SCHEMA = json.loads((CHART / "values.schema.json").read_text())


def test_an_empty_environment_gives_the_built_in_settings() -> None:
    config = OperatorConfig.from_env({})
    assert config == OperatorConfig()
    watching = config.watching
    assert (config.backend.kind, watching.namespaces, watching.workers, config.metrics.port) == (
        "sparkoperator",
        (),
        64,
        8080,
    )
    assert watching.resync_seconds == 60.0
    assert config.backend.local_state_dir == Path(".hudi-bucket-operator")


def test_the_built_in_job_and_writer_settings_are_the_policys_own_defaults() -> None:
    assert OperatorConfig.from_env({}).policy == Policy()
    assert Policy().jobs.image == "hudi-bucket-operator-job:latest"


def test_every_setting_is_read_from_its_variable() -> None:
    config = OperatorConfig.from_env(
        {
            "HBO_JOB_BACKEND": "local",
            "HBO_NAMESPACES": "lake, sales,,",
            "HBO_RESYNC_SECONDS": "2.5",
            "HBO_WORKERS": "8",
            "HBO_METRICS_PORT": "9090",
            "HBO_KUBE_SERVER": "http://127.0.0.1:8001",
            "HBO_LOCAL_STATE_DIR": "/tmp/state",
            "HBO_JOB_IMAGE": "registry.example.com/hudi/job:2.1.0",
            "HBO_SPARK_VERSION": "4.1.0",
            "HBO_JOB_SERVICE_ACCOUNT": "lake-spark",
            "HBO_MAIN_APPLICATION_FILE": "local:///app/main.py",
            "HBO_JOB_TTL_SECONDS": "0",
            "HBO_DRIVER_CORES": "2",
            "HBO_DRIVER_MEMORY": "4g",
            "HBO_EXECUTOR_INSTANCES": "12",
            "HBO_EXECUTOR_CORES": "4",
            "HBO_EXECUTOR_MEMORY": "16g",
            "HBO_IMAGE_PULL_POLICY": "Always",
            "HBO_ALLOWED_IMAGES": "registry.example.com/hudi/",
            "HBO_ALLOWED_SERVICE_ACCOUNTS": "lake-spark-irsa",
            "HBO_ALLOWED_SPARK_CONF": "spark.speculation",
            "HBO_ALLOWED_HADOOP_CONF": "fs.s3a.endpoint",
            "HBO_SPARK_CONF": '{"spark.ui.enabled": "false"}',
            "HBO_DRIVER_POD": json.dumps(
                {"priorityClassName": "batch-high", "tolerations": [{"key": "spark", "operator": "Exists"}]}
            ),
            "HBO_EXECUTOR_POD": '{"nodeSelector": {"pool": "spot"}, "annotations": {"team": "lake"}}',
            "HBO_IMAGE_PULL_SECRETS": "registry-a, registry-b",
            "HOME": "/root",  # not a setting: ignored
        }
    )
    watching = config.watching
    assert (config.backend.kind, watching.namespaces, watching.resync_seconds, watching.workers) == (
        "local",
        ("lake", "sales"),
        2.5,
        8,
    )
    assert (config.metrics.port, config.kube.server, config.backend.local_state_dir) == (
        9090,
        "http://127.0.0.1:8001",
        Path("/tmp/state"),
    )
    assert config.jobs == JobDefaults(
        image="registry.example.com/hudi/job:2.1.0",
        spark_version="4.1.0",
        service_account="lake-spark",
        main_application_file="local:///app/main.py",
        ttl_seconds=0,
        driver_cores=2,
        driver_memory="4g",
        executor_cores=4,
        executor_memory="16g",
        executor_instances=12,
        image_pull_policy="Always",
        allowed_images=("registry.example.com/hudi/",),
        allowed_service_accounts=("lake-spark-irsa",),
        allowed_spark_conf=("spark.speculation",),
        allowed_hadoop_conf=("fs.s3a.endpoint",),
        spark_conf={"spark.ui.enabled": "false"},
        driver_pod=PodPlacement(
            priority_class_name="batch-high", tolerations=(Toleration(key="spark", operator="Exists"),)
        ),
        executor_pod=PodPlacement(node_selector={"pool": "spot"}, annotations={"team": "lake"}),
        image_pull_secrets=("registry-a", "registry-b"),
    )


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("HBO_WORKERS", "abc", "HBO_WORKERS must be an integer above 0, not 'abc'"),
        ("HBO_WORKERS", "0", "HBO_WORKERS must be an integer above 0, not '0'"),
        ("HBO_METRICS_PORT", "65536", "HBO_METRICS_PORT must be a port number in 1..65535, or 0 for none"),
        ("HBO_METRICS_PORT", "-1", "HBO_METRICS_PORT must be a port number in 1..65535, or 0 for none"),
        ("HBO_RESYNC_SECONDS", "0", "HBO_RESYNC_SECONDS must be a number of seconds above 0, not '0'"),
        ("HBO_RESYNC_SECONDS", "nan", "HBO_RESYNC_SECONDS must be a number of seconds above 0, not 'nan'"),
        (
            "HBO_JOB_TTL_SECONDS",
            "-1",
            "HBO_JOB_TTL_SECONDS must be an integer of seconds, 0 to 31536000 (a year), not '-1'",
        ),
        ("HBO_DRIVER_CORES", "0", "HBO_DRIVER_CORES must be an integer from 1 to 256, not '0'"),
        (
            "HBO_EXECUTOR_INSTANCES",
            "1.5",
            "HBO_EXECUTOR_INSTANCES must be an integer from 1 to 1000, not '1.5'",
        ),
        ("HBO_EXECUTOR_MEMORY", "4Gi", "HBO_EXECUTOR_MEMORY must be in Spark's format"),
        ("HBO_JOB_BACKEND", "spark", "HBO_JOB_BACKEND must be sparkoperator or local, not 'spark'"),
        (
            "HBO_IMAGE_PULL_POLICY",
            "always",
            "HBO_IMAGE_PULL_POLICY must be Always, IfNotPresent or Never, not 'always'",
        ),
        ("HBO_JOB_IMAGE", "", "HBO_JOB_IMAGE must be a non-empty string, not ''"),
        ("HBO_SPARK_CONF", "{nope", "HBO_SPARK_CONF must be a JSON object of strings"),
        ("HBO_SPARK_CONF", '["a"]', "HBO_SPARK_CONF must be a JSON object of strings"),
        ("HBO_SPARK_CONF", '{"spark.cores.max": 4}', """not '{"spark.cores.max": 4}'"""),
        ("HBO_ALLOWED_IMAGES", "Not An Image!", "jobs.allowedImages ['Not An Image!']"),
        ("HBO_DRIVER_POD", '{"hostNetwork": true}', "HBO_DRIVER_POD must be a JSON object of Kubernetes pod"),
        (
            "HBO_EXECUTOR_POD",
            '{"tolerations": [{"operator": "Maybe"}]}',
            "HBO_EXECUTOR_POD must be a JSON object of Kubernetes pod",
        ),
        ("HBO_DRIVER_POD", '{"priorityClassName": "Top!"}', "HBO_DRIVER_POD must be a JSON object"),
        ("HBO_IMAGE_PULL_SECRETS", "Registry_Key", "jobs.imagePullSecrets ['Registry_Key']"),
    ],
)
def test_a_bad_value_is_refused_at_start_naming_its_variable(variable: str, value: str, said: str) -> None:
    with pytest.raises(SettingsError) as refused:
        OperatorConfig.from_env({variable: value})
    assert said in str(refused.value)
    assert "Helm values" in str(refused.value)


def test_metrics_port_0_serves_no_metrics() -> None:
    assert OperatorConfig.from_env({"HBO_METRICS_PORT": "0"}).metrics.port == 0


def test_every_bad_value_is_said_once_in_one_refusal() -> None:
    with pytest.raises(SettingsError) as refused:
        OperatorConfig.from_env(
            {"HBO_WORKERS": "many", "HBO_METRICS_PORT": "http", "HBO_SPARK_CONF": '{"a": 1, "b": 2}'}
        )
    said = str(refused.value)
    assert said.count("HBO_WORKERS") == said.count("HBO_METRICS_PORT") == said.count("HBO_SPARK_CONF") == 1


# --- the chart ---------------------------------------------------------------------------------------------


def chart_variables() -> dict[str, str]:
    """Each HBO_* variable the deployment template can set, and the expression that sets it."""
    found = re.findall(r"(\{\{-? with [^}]*\}\}\s*\n\s*)?- name: (HBO_\w+)\s*\n\s*value: (.*)", DEPLOYMENT)
    return {variable: within + value for within, variable, value in found}  # a `with` block's value too


def test_the_chart_sets_exactly_the_settings_the_model_says_it_sets() -> None:
    assert set(chart_variables()) == set(HELM_VALUES)


def test_each_variable_the_chart_sets_comes_from_the_value_the_model_names() -> None:
    for variable, expression in chart_variables().items():
        helper = re.search(r'include "([\w.]+)"', expression)
        # A named template's value is read in its definition.
        read = HELPERS.split(f'define "{helper.group(1)}"', 1)[1].split("end", 1)[0] if helper else expression
        assert f".Values.{HELM_VALUES[variable]}" in read, variable


def values_default(path: str) -> Any:
    value: Any = VALUES
    for key in path.split("."):
        value = value[key]
    return value


def test_the_charts_defaults_are_the_operators_defaults() -> None:
    built_in = OperatorConfig()
    for variable, path in HELM_VALUES.items():
        if variable == "HBO_JOB_IMAGE":  # repository and tag (the chart's appVersion): test_chart's
            continue
        default = values_default(path)
        if f".Values.{path} | toJson" in DEPLOYMENT:  # as the chart renders it
            text = json.dumps(default)
        elif isinstance(default, list):
            text = ",".join(default)
        else:
            text = str(default).lower() if isinstance(default, bool) else str(default)
        setting = VARIABLES[variable]
        from_chart = setting.of(OperatorConfig.from_env({variable: text}))
        assert from_chart == setting.of(built_in), f"values.yaml's default for {variable} differs"


def schema_of(path: str) -> dict[str, Any]:
    node: dict[str, Any] = SCHEMA
    for key in path.split("."):
        node = node["properties"][key]
    return node


def test_the_charts_schema_bounds_each_value_as_the_setting_does_or_says_why_not() -> None:
    """Numbers' bounds and strings' patterns: a value the chart takes is one the operator takes."""
    for variable, helm in HELM.items():
        node = schema_of(helm.path)
        if node.get("type") not in ("integer", "number", "string"):
            continue
        bounds = {}
        for item in VARIABLES[variable].info.metadata:
            bounds |= {
                key: getattr(item, key)
                for key in ("ge", "gt", "le", "pattern")
                if getattr(item, key, None) is not None
            }
        chart = {"ge": node.get("minimum"), "gt": node.get("exclusiveMinimum"), "le": node.get("maximum"),
                 "pattern": node.get("pattern")}  # fmt: skip
        chart = {key: value for key, value in chart.items() if value is not None}
        if variable in DURATIONS:  # text read as seconds: the chart's pattern takes what it reads
            taken = [text for text in DURATION_SAMPLES if re.fullmatch(chart["pattern"], text)]
            assert taken == [text for text in DURATION_SAMPLES if parse_duration(text)], variable
            continue
        assert (chart == bounds) != bool(helm.narrower), (variable, chart, bounds, helm.narrower)


DURATIONS = {variable for variable, setting in VARIABLES.items() if setting.info.annotation is int and any(
    isinstance(item, BeforeValidator) for item in setting.info.metadata)}  # fmt: skip
DURATION_SAMPLES = ["90m", "6h", "7d", "1m", "999999m", "1000000m", "0m", "15", "1h30m", "2w", "90s", " 6h"]


def test_the_settings_page_is_the_reference_the_operator_prints(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["settings"]) == 0
    printed = capsys.readouterr().out
    assert printed == reference()
    assert (REPO / "docs" / "settings.md").read_text().endswith("\n" + printed), (
        "docs/settings.md is not what `hudi-bucket-operator settings` prints: paste its output there"
    )
