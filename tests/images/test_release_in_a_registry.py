"""A release as a platform team takes it (release/make.py, ``./dev release``): the same bytes when made
again, every file named with its checksum, the chart pinning the images it was made with; pushed to a
real registry (tests/registry), the images are the digests the release names and the chart installs
from its OCI reference exactly as packaged."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from hudi_bucket.release import VERSION
from lib.helm_chart import helm
from lib.paths import REPO
from registry.release import make_release, push_release
from registry.server import Registry


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory, built_images: dict[str, str]) -> Path:
    out = tmp_path_factory.mktemp("release") / f"hudi-bucket-operator-{VERSION}"
    make_release(out, built_images)
    return out


def rendered_images(chart: str, *args: str) -> list[str]:
    manifests = yaml.safe_load_all(helm("template", "hbo", chart, *args))
    deployment = next(m for m in manifests if m and m["kind"] == "Deployment")
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    job_image = next(e["value"] for e in container["env"] if e["name"] == "HBO_JOB_IMAGE")
    return [container["image"], job_image]


def test_a_release_made_twice_is_the_same_bytes_each_file_checksummed(
    release: Path, built_images: dict[str, str], tmp_path: Path
) -> None:
    again = tmp_path / "again"
    make_release(again, built_images)
    assert (again / "SHA256SUMS").read_text() == (release / "SHA256SUMS").read_text()
    checked = subprocess.run(
        ["sha256sum", "--check", "--strict", "SHA256SUMS"],
        cwd=release,
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    listed = {line.split("  ", 1)[1] for line in (release / "SHA256SUMS").read_text().splitlines()}
    present = {str(p.relative_to(release)) for p in release.rglob("*") if p.is_file()} - {"SHA256SUMS"}
    assert listed == present


def test_the_release_names_its_version_commit_and_the_digests_its_chart_pins(release: Path) -> None:
    manifest = json.loads((release / "release.json").read_text())
    assert manifest["version"] == VERSION
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    )
    assert manifest["commit"] == head.stdout.strip()
    digests = {name: image["digest"] for name, image in manifest["images"].items()}
    assert set(digests) == {"operator", "job"}
    chart = str(release / manifest["chart"]["file"])
    assert rendered_images(chart) == [
        f"hudi-bucket-operator@{digests['operator']}",
        f"hudi-bucket-operator-job@{digests['job']}",
    ]
    # A registry of one's own, the digests kept: only the repository is the installer's to set.
    assert rendered_images(
        chart, "--set", "image.repository=registry.example.com/hbo",
        "--set", "jobs.image.repository=registry.example.com/hbo-job",
    ) == [f"registry.example.com/hbo@{digests['operator']}", f"registry.example.com/hbo-job@{digests['job']}"]  # fmt: skip
    assert {p.name for p in (release / "crds").iterdir()} == {p.name for p in (REPO / "crds").iterdir()}
    assert (release / f"hudi_bucket_operator-{VERSION}-py3-none-any.whl").is_file()


def test_pushed_to_a_registry_the_images_are_the_named_digests_and_the_chart_installs_from_it(
    release: Path, registry: Registry, tmp_path: Path
) -> None:
    manifest = json.loads((release / "release.json").read_text())
    pushed = push_release(release, registry)  # it checks the registry's digests against the release's
    for name, image in manifest["images"].items():
        assert pushed.digest(name) == image["digest"]
        assert registry.digest(pushed.images[name]) == image["digest"]
        assert registry.digest(f"{pushed.repository(name)}:{VERSION}") == image["digest"]
    chart = pushed.chart
    helm("pull", chart, "--version", VERSION, "--plain-http", "--destination", str(tmp_path))
    pulled = (tmp_path / manifest["chart"]["file"]).read_bytes()
    assert pulled == (release / manifest["chart"]["file"]).read_bytes()
    assert rendered_images(
        chart, "--version", VERSION, "--plain-http",
        "--set", f"image.repository={registry.host}/hudi-bucket-operator",
        "--set", f"jobs.image.repository={registry.host}/hudi-bucket-operator-job",
    ) == [
        f"{registry.host}/hudi-bucket-operator@{manifest['images']['operator']['digest']}",
        f"{registry.host}/hudi-bucket-operator-job@{manifest['images']['job']['digest']}",
    ]  # fmt: skip
