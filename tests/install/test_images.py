"""What the Dockerfiles rely on, read from the files: what they copy exists, builds the package and is
what images/build.sh hashes, the commands they run start, the operator needs no PySpark, and their
ports, paths and versions are the ones the chart, the operator's settings and ./dev use. The images built
and run are in test_built_images.py."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hudi_bucket.contract.requests import HUDI_BUNDLE_ENV, JVM_JAR_ENV
from hudi_bucket_operator.policy.job_defaults import JobDefaults
from hudi_bucket_operator.runtime.settings import OperatorConfig
from lib.paths import REPO

PYTHON = Path(sys.executable)
BIN = PYTHON.parent
VALUES = yaml.safe_load((REPO / "charts" / "hudi-bucket-operator" / "values.yaml").read_text())
SPARK_EXTRA = ("pyspark", "pyarrow", "numpy", "pandas", "py4j")


def instructions(dockerfile: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined and comments dropped."""
    lines = [
        line for line in (REPO / dockerfile).read_text().splitlines() if not line.lstrip().startswith("#")
    ]
    joined = "\n".join(lines).replace("\\\n", " ")
    out = []
    for line in joined.splitlines():
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def arguments(dockerfile: str, instruction: str) -> list[str]:
    return [rest for word, rest in instructions(dockerfile) if word == instruction]


def copied_sources(dockerfile: str) -> list[str]:
    """What a build reads from the repository: COPY's sources, not those from an earlier stage."""
    sources = []
    for rest in arguments(dockerfile, "COPY"):
        if "--from=" in rest:
            continue  # from an earlier build stage, not from the repository
        words = [w for w in shlex.split(rest) if not w.startswith("--")]
        sources += words[:-1]
    return sources


def run(*command: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(c) for c in command], capture_output=True, text=True, cwd=REPO, timeout=120, check=False, env=env
    )


DOCKERFILES = ["Dockerfile.operator", "Dockerfile.job"]


@pytest.mark.parametrize("dockerfile", DOCKERFILES)
def test_no_step_reads_what_its_layer_cache_key_leaves_out(dockerfile: str) -> None:
    # A RUN step's mounts are not in buildah's (or the classic Docker builder's) cache key: with a bind
    # mount of the wheel, a rebuild after a source change kept the old install layer, old package and all.
    mounts = [rest for rest in arguments(dockerfile, "RUN") if "--mount=" in rest]
    assert mounts == [], "COPY what a step reads, so that a change in it is a new layer"


@pytest.mark.parametrize("dockerfile", DOCKERFILES)
def test_every_file_an_image_copies_exists(dockerfile: str) -> None:
    sources = copied_sources(dockerfile)
    assert sources
    for source in sources:
        assert (REPO / source).exists(), f"{dockerfile} copies {source}, which is not in the repository"


@pytest.mark.parametrize("dockerfile", DOCKERFILES)
def test_what_an_image_copies_is_enough_to_build_the_package(dockerfile: str, tmp_path: Path) -> None:
    context = tmp_path / "context"
    context.mkdir()
    for source in copied_sources(dockerfile):
        if (REPO / source).is_dir():
            shutil.copytree(
                REPO / source,
                context / source,
                ignore=shutil.ignore_patterns("__pycache__"),
                dirs_exist_ok=True,
            )
        else:
            (context / source).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO / source, context / source)
    # setuptools' egg_info reads pyproject.toml, finds the packages and their data as `pip install` does.
    result = run(
        PYTHON, "-c", "from setuptools import setup; setup()", "-q", "egg_info", "--egg-base", tmp_path
    )
    assert result.returncode == 0, result.stderr
    (info,) = tmp_path.glob("*.egg-info")
    scripts = (info / "entry_points.txt").read_text()
    assert "hudi-bucket-operator = hudi_bucket_operator.cli:main" in scripts
    assert "hudi-bucket-job = hudi_bucket.cli:main" in scripts
    assert set((info / "top_level.txt").read_text().split()) == {"hudi_bucket", "hudi_bucket_operator"}


@pytest.mark.parametrize("dockerfile", DOCKERFILES)
def test_the_images_cache_key_covers_what_a_build_reads(dockerfile: str) -> None:
    """images/build.sh tags a built image by the hash of its inputs: every file the recipe reads from the
    repository must be among them, or a change to it would leave a stale image in the cache."""
    script = (REPO / "images" / "build.sh").read_text()
    (name,) = re.findall(rf"\[(\w+)\]={re.escape(dockerfile)}", script)
    (inputs,) = re.findall(rf'^\s*\[{name}\]="([^"]+)"', script, re.M)
    hashed = inputs.split()
    assert dockerfile in hashed
    assert ".dockerignore" in hashed
    for source in copied_sources(dockerfile):
        assert any(source == h or source.startswith(h.rstrip("/") + "/") for h in hashed), source


def maven_url(coordinates: str) -> str:
    group, artifact, version = coordinates.split(":")
    path = f"{group.replace('.', '/')}/{artifact}/{version}/{artifact}-{version}.jar"
    return f"https://repo1.maven.org/maven2/{path}"


def job_args() -> dict[str, str]:
    return dict(rest.partition("=")[::2] for rest in arguments("Dockerfile.job", "ARG") if "=" in rest)


def expand(text: str, args: dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], text)


def test_the_job_image_carries_the_s3a_jars_the_tests_run_pinned_alike() -> None:
    """The same hadoop-aws and AWS SDK, at the same SHA-1s, as ``./dev`` fetches for the S3 tests."""
    dev = (REPO / "dev").read_text()
    args = job_args()
    added = [expand(rest, args).split() for rest in arguments("Dockerfile.job", "ADD")]
    checks = " ".join(arguments("Dockerfile.job", "RUN"))
    for name in ("HADOOP_AWS", "AWS_SDK_BUNDLE"):
        (coordinates,) = re.findall(rf"^{name}=(\S+)$", dev, re.M)
        (sha1,) = re.findall(rf"^{name}_SHA1=(\w+)$", dev, re.M)
        assert args[f"{name}_VERSION"] == coordinates.rsplit(":", 1)[1]
        assert args[f"{name}_SHA1"] == sha1
        assert ["--chmod=644", maven_url(coordinates), "/jars/"] in added
        artifact = coordinates.split(":")[1]
        assert (
            f'echo "${{{name}_SHA1}}  /jars/{artifact}-${{{name}_VERSION}}.jar" | sha1sum --check' in checks
        )
    import pyspark

    hadoop = args["HADOOP_AWS_VERSION"]
    assert (Path(pyspark.__file__).parent / "jars" / f"hadoop-client-api-{hadoop}.jar").exists()
    assert "--from=jars /jars/ /opt/spark/jars/" in arguments("Dockerfile.job", "COPY")


def test_operator_image_is_small_and_runs_the_operator_as_non_root() -> None:
    assert "BASE=debian:bookworm-slim" in arguments("Dockerfile.operator", "ARG")  # its python3 is 3.11
    assert arguments("Dockerfile.operator", "FROM")[0] == "${BASE} AS python"
    installs = " ".join(arguments("Dockerfile.operator", "RUN"))
    assert 'pip install -c /tmp/wheels/constraints.txt "$(ls /tmp/wheels/*.whl)[operator]"' in installs
    assert "spark" not in installs
    (user,) = arguments("Dockerfile.operator", "USER")
    assert int(user.split(":")[0]) > 0  # numeric, so that runAsNonRoot can be checked
    (entrypoint,) = arguments("Dockerfile.operator", "ENTRYPOINT")
    assert json.loads(entrypoint) == ["hudi-bucket-operator", "run"]  # the chart passes only flags
    (exposed,) = arguments("Dockerfile.operator", "EXPOSE")
    assert {int(p) for p in exposed.split()} == {VALUES["metrics"]["port"], VALUES["health"]["port"]}


def test_operator_entry_point_starts() -> None:
    for args in (["--help"], ["run", "--help"]):
        result = run(BIN / "hudi-bucket-operator", *args)
        assert result.returncode == 0, result.stderr
    assert "--log-format" in result.stdout


def test_operator_imports_without_the_spark_extra() -> None:
    # The operator image has no PySpark (nor pyarrow, numpy, pandas): refuse them, then load everything
    # `hudi-bucket-operator run` loads.
    code = f"""
import importlib.abc, sys
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {SPARK_EXTRA!r}:
            raise ImportError("not in the operator image: " + name)
sys.meta_path.insert(0, Refuse())
import hudi_bucket_operator.runtime.handlers, hudi_bucket_operator.cli, hudi_bucket_operator.runtime.backends
print(sorted(m for m in sys.modules if m.partition(".")[0] in {SPARK_EXTRA!r}))
"""
    result = run(PYTHON, "-c", code, env={"PATH": str(BIN), "HBO_METRICS_PORT": "0"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_job_image_puts_the_main_file_where_spark_applications_look() -> None:
    main_file = JobDefaults(image="i", spark_version="v").main_application_file
    assert main_file == VALUES["jobs"]["mainApplicationFile"]
    copies = [shlex.split(rest) for rest in arguments("Dockerfile.job", "COPY")]
    assert ["spark_app/main.py", main_file.removeprefix("local://")] in copies


def test_job_main_file_starts() -> None:
    result = run(PYTHON, "spark_app/main.py", "--help")
    assert result.returncode == 0, result.stderr
    assert "hudi-bucket-job" in result.stdout


def test_job_image_has_the_spark_version_jobs_declare_and_the_spark_extra() -> None:
    (default,) = [rest for rest in arguments("Dockerfile.job", "ARG") if rest.startswith("SPARK_VERSION=")]
    version = default.partition("=")[2]
    assert version == VALUES["jobs"]["sparkVersion"] == OperatorConfig().jobs.spark_version
    pins = (REPO / "constraints.txt").read_text().splitlines()
    assert f"pyspark=={version}" in pins  # the tests run on the image's Spark
    installs = " ".join(arguments("Dockerfile.job", "RUN"))
    assert 'pip install -c /tmp/wheels/constraints.txt "$(ls /tmp/wheels/*.whl)[spark]"' in installs
    assert '"pyspark==${SPARK_VERSION}"' in installs  # the image's own Spark, not another one
    (user,) = arguments("Dockerfile.job", "USER")[-1:]
    assert user == "185"  # Spark's user in its official images


def test_job_image_runs_spark_workers_with_the_python_that_has_the_job() -> None:
    env = " ".join(arguments("Dockerfile.job", "ENV"))
    venv_python = "/opt/hudi-bucket-operator/venv/bin/python"
    assert f"PYSPARK_PYTHON={venv_python}" in env
    assert f"PYSPARK_DRIVER_PYTHON={venv_python}" in env
    assert "python3.11 -m venv /opt/hudi-bucket-operator/venv" in " ".join(arguments("Dockerfile.job", "RUN"))


def test_job_image_carries_the_hudi_bundle_the_tests_run_and_tells_the_job_where() -> None:
    dev = (REPO / "dev").read_text()
    (pinned,) = re.findall(r"^HUDI_BUNDLE=org\.apache\.hudi:hudi-spark3\.5-bundle_2\.12:(\S+)$", dev, re.M)
    (sha1,) = re.findall(r"^HUDI_BUNDLE_SHA1=(\w+)$", dev, re.M)
    args = job_args()
    assert (args["HUDI_VERSION"], args["HUDI_BUNDLE_SHA1"]) == (pinned, sha1)
    env = " ".join(arguments("Dockerfile.job", "ENV"))
    jar = "hudi-spark3.5-bundle_2.12-${HUDI_VERSION}.jar"
    assert f"{HUDI_BUNDLE_ENV}=/opt/spark/jars/{jar}" in env
    assert f'echo "${{HUDI_BUNDLE_SHA1}}  /jars/{jar}" | sha1sum --check' in " ".join(
        arguments("Dockerfile.job", "RUN")
    )
    url = maven_url(f"org.apache.hudi:hudi-spark3.5-bundle_2.12:{pinned}")
    assert ["--chmod=644", url, "/jars/"] in [
        expand(rest, args).split() for rest in arguments("Dockerfile.job", "ADD")
    ]
    assert "--from=jars /jars/ /opt/spark/jars/" in arguments("Dockerfile.job", "COPY")


def test_job_image_compiles_the_jobs_jvm_classes_as_dev_does_and_tells_the_job_where() -> None:
    """The commit protocol that writes final names: the same sources and javac target as ``./dev``
    compiles for the tests, against the image's own Spark, on Spark's classpath and named to the job."""
    dev = (REPO / "dev").read_text()
    (sources,) = re.findall(r"^JVM_SOURCES=(\S+)$", dev, re.M)
    (target,) = re.findall(r"javac -nowarn (--release \d+) ", dev)
    runs = " ".join(arguments("Dockerfile.job", "RUN"))
    assert f'javac -nowarn {target} -cp "/opt/spark/jars/*"' in runs  # the image's Spark (FROM spark)
    assert f"{sources} /src" in arguments("Dockerfile.job", "COPY")
    assert "spark AS jvm-classes" in arguments("Dockerfile.job", "FROM")
    jar = "/opt/spark/jars/hudi-bucket-jvm.jar"
    assert "--from=jvm-classes /jars/hudi-bucket-jvm.jar /opt/spark/jars/" in arguments(
        "Dockerfile.job", "COPY"
    )
    assert f"{JVM_JAR_ENV}={jar}" in " ".join(arguments("Dockerfile.job", "ENV"))
