"""Both images, built from the Dockerfiles by images/build.sh and run with runc as their own non-root
user: the operator's entry point starts without PySpark, and the job image runs real jobs through its
entrypoint's driver mode (what Spark on Kubernetes starts), with the image's Spark, our JVM classes,
Hudi's bundle and the S3A jars."""

from __future__ import annotations

import csv
import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from containers import Image
from hudi_bucket_operator.policy.job_defaults import JobDefaults
from lib.paths import REPO

VALUES = yaml.safe_load((REPO / "charts" / "hudi-bucket-operator" / "values.yaml").read_text())
MAIN = JobDefaults(image="i", spark_version="v").main_application_file  # local:///opt/...
SPARK_VERSION = VALUES["jobs"]["sparkVersion"]


def shared(path: Path) -> Path:
    """A folder the image's user may write to (it is not root)."""
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o777)
    return path


def test_operator_image_runs_its_entry_point_as_a_non_root_user(
    images: dict[str, Image], tmp_path: Path
) -> None:
    operator = images["operator"]
    process = operator.config()["process"]
    assert process["user"]["uid"] == 10001
    assert process["args"] == ["hudi-bucket-operator", "run"]
    result = operator.run(
        ["--help"], tmp_path
    )  # appended to the entrypoint: `hudi-bucket-operator run --help`
    assert result.returncode == 0, result.stderr
    assert "--log-format" in result.stdout


def test_operator_image_loads_the_operator_and_has_no_pyspark(
    images: dict[str, Image], tmp_path: Path
) -> None:
    code = (
        "import importlib.util, os, sys\n"
        "import hudi_bucket_operator.runtime.handlers, hudi_bucket_operator.cli, hudi_bucket_operator.runtime.backends\n"
        "print(os.getuid(), sys.version.split()[0], [m for m in ('pyspark', 'pyarrow', 'numpy', 'pandas')"
        " if importlib.util.find_spec(m)])\n"
    )
    # The entrypoint needs a cluster: python instead, as a pod's `command:` would replace it.
    result = images["operator"].run(
        ["python", "-c", code], tmp_path, entrypoint=False, env={"HBO_METRICS_PORT": "0"}
    )
    assert result.returncode == 0, result.stderr
    uid, python, found = result.stdout.split(" ", 2)
    assert (uid, python.rsplit(".", 1)[0], found.strip()) == ("10001", "3.11", "[]")


def python_sources(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for package in ("hudi_bucket", "hudi_bucket_operator")
        for path in (root / package).rglob("*.py")
    }


@pytest.mark.parametrize("name", ["operator", "job"])
def test_each_image_holds_the_package_of_this_checkout(images: dict[str, Image], name: str) -> None:
    # A rebuild once kept an install layer from an earlier build (its cache key left the wheel out), and
    # the job image ran modules deleted since: the image's files, not only its tag, are this checkout's.
    (site,) = (images[name].bundle / "rootfs" / "opt" / "hudi-bucket-operator" / "venv").glob(
        "lib/python3*/site-packages"
    )
    ours = {**python_sources(REPO / "spark_app"), **python_sources(REPO / "operator")}
    installed = python_sources(site)
    assert sorted(installed) == sorted(ours)
    assert [path for path in ours if installed[path] != ours[path]] == []


def write_orders(folder: Path) -> Path:
    source = folder / "orders.csv"
    with source.open("w", newline="") as out:
        rows = csv.writer(out)
        rows.writerow(["id", "day", "amount", "ts"])
        for i in range(2000):
            rows.writerow([f"o{i:05d}", f"2025-11-{1 + i % 3:02d}", i * 1.5, i])
    return source


def tails(run: subprocess.CompletedProcess[str]) -> str:
    """Both streams' ends: spark-submit passes the Python driver's own output, tracebacks too, to stdout."""
    return f"stdout:\n{run.stdout[-3000:]}\nstderr:\n{run.stderr[-3000:]}"


def driver(*job: str) -> list[str]:
    """A driver container's args as spark-submit's Kubernetes backend gives them (client mode inside)."""
    return ["driver", "--master", "local[2]", "--conf", "spark.ui.enabled=false", *job]


def test_job_image_runs_a_write_and_a_plan_with_its_spark_and_jars(
    images: dict[str, Image], tmp_path: Path
) -> None:
    job = images["job"]
    assert job.config()["process"]["user"]["uid"] == 185
    data = shared(tmp_path / "data")
    write_orders(data)
    (data / "probe.py").write_text((Path(__file__).parent / "probe.py").read_text())
    env = {"SPARK_DRIVER_BIND_ADDRESS": "127.0.0.1", "SPARK_LOCAL_IP": "127.0.0.1"}

    write = job.run(
        driver(
            MAIN,
            "write",
            "--create",
            "--table",
            "/data/orders",
            "--source",
            "/data/orders.csv",
            "--format",
            "csv",
            "--record-key",
            "id",
            "--partition-field",
            "day",
            "--ordering-field",
            "ts",
            "--hive-style",
            "--default",
            "2",
            "--report",
            "/data/write.json",
        ),
        shared(tmp_path / "write"),
        mounts={"/data": data},
        env=env,
    )
    assert write.returncode == 0, tails(write)
    report = json.loads((data / "write.json").read_text())
    assert report["outcome"] == "Succeeded", report
    assert report["result"]["rowsWritten"] == 2000
    assert (data / "orders" / ".hoodie" / "hoodie.properties").exists()

    plan = job.run(
        driver(
            "local:///data/probe.py",
            "plan",
            "--table",
            "/data/orders",
            "--expressions",
            "day=2025-11-02,4",
            "--default",
            "2",
            "--report",
            "/data/plan.json",
        ),
        shared(tmp_path / "plan"),
        mounts={"/data": data},
        env=env,
    )
    assert plan.returncode == 0, tails(plan)
    found = json.loads(plan.stdout.strip().splitlines()[-1])
    assert found["exit"] == 0
    assert (found["uid"], found["python"].rsplit(".", 1)[0], found["spark"]) == (185, "3.11", SPARK_VERSION)
    assert found["sparkHome"] == "/opt/spark"
    assert found["sparkHomeReal"].endswith("/site-packages/pyspark")  # the wheel's Spark
    assert found["classes"] == {"jvm": True, "hudi": True, "s3a": True, "aws": True}
    assert "HoodieSparkSessionExtension" in found["extensions"]  # HBO_HUDI_BUNDLE turned Hudi's SQL on
    plan_report = json.loads((data / "plan.json").read_text())
    assert plan_report["outcome"] == "Succeeded", plan_report
    changes = (
        plan_report["result"]["plan"]["changes"]
        if "plan" in plan_report["result"]
        else plan_report["result"]["changes"]
    )
    assert [(c["partition"], c["oldBuckets"], c["newBuckets"]) for c in changes] == [("day=2025-11-02", 2, 4)]
