"""A release of this commit, as a platform team pins it (``./dev release`` runs this):

    python release/make.py [OUT] --helm HELM --image NAME=LAYOUT:TAG ... [--source CHECKOUT]

writes into OUT (new; dist/hudi-bucket-operator-VERSION unless named):

    hudi-bucket-operator-<version>.tgz   the chart, packaged by helm, its values pinned to the images' digests
    crds/                                the CRDs, to apply before the chart (docs/install.md)
    images/<name>.oci.tar                each image as an OCI archive: one image and every blob it needs
    hudi_bucket_operator-<version>-py3-none-any.whl   the package: the plugin (kubectl hbt) and both CLIs
    release.json                         what it is: version, commit, digests, each file's sha256
    SHA256SUMS                           the same checksums, as ``sha256sum --check`` reads them

``--source`` makes it of another checkout (a git work tree of an earlier release's commit, its images
built by its own images/build.sh): its chart, CRDs and package, as the tests install the last release.

Made twice from the same commit and the same images, every file is the same bytes: the archives hold
no times nor owners, the chart's and the wheel's files carry the commit's time. The images' digests are what the build cache holds: images/build.sh rebuilt from an
empty cache makes new digests (apt's and pip's files carry the time they were written, and Debian's
mirror moves), which is why the release names them and the chart pins them.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import IO

import yaml

REPO = Path(__file__).resolve().parents[1]
CHART = Path("charts") / "hudi-bucket-operator"  # in the source tree
CRDS = Path("crds")
REF_NAME = "org.opencontainers.image.ref.name"  # an OCI index's tag of a manifest
# Where each image's digest goes in the chart's values (values.yaml's `digest: ""` lines).
DIGEST_VALUES = {"operator": ("image",), "job": ("jobs", "image")}
MANIFEST = "release.json"
SUMS = "SHA256SUMS"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "out",
        type=Path,
        nargs="?",
        help="the folder to write, new (default: dist/hudi-bucket-operator-VERSION)",
    )
    parser.add_argument("--helm", required=True, help="the helm binary that packages the chart")
    parser.add_argument(
        "--image", action="append", default=[], help="NAME=LAYOUT:TAG, once per image (operator, job)"
    )
    parser.add_argument(
        "--source", type=Path, default=REPO, help="the git work tree to release (default: this one)"
    )
    args = parser.parse_args(argv)
    images = dict(item.split("=", 1) for item in args.image)
    if set(images) != set(DIGEST_VALUES):
        parser.error(f"images: give exactly {sorted(DIGEST_VALUES)}, as NAME=LAYOUT:TAG")
    if args.out is None:
        args.out = REPO / "dist" / f"hudi-bucket-operator-{chart_versions(args.source)[0]}"
    if args.out.exists():
        parser.error(f"{args.out} exists: a release is written into a new folder")
    manifest = make_release(args.out, Path(args.helm), images, args.source.resolve())
    print(json.dumps({"version": manifest["version"], "images": manifest["images"]}, indent=2))
    return 0


def make_release(out: Path, helm: Path, images: dict[str, str], source: Path = REPO) -> dict[str, object]:
    version, app_version = chart_versions(source)
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".release-", dir=out.parent))
    try:
        digests = {}
        (work / "images").mkdir()
        for name, layout_and_tag in sorted(images.items()):
            layout, tag = layout_and_tag.rsplit(":", 1)
            with (work / "images" / f"{name}.oci.tar").open("wb") as archive:
                digests[name] = write_oci_archive(Path(layout), tag, archive)
        package_chart(helm, digests, source, work)
        shutil.copytree(source / CRDS, work / "crds")
        build_wheel(source, work)
        files = {path: sha256_of(work / path) for path in sorted(files_under(work))}
        manifest: dict[str, object] = {
            "name": "hudi-bucket-operator",
            "version": version,
            "commit": git(source, "rev-parse", "HEAD"),
            "source": source_state(source),
            "chart": {"file": f"hudi-bucket-operator-{version}.tgz", "appVersion": app_version},
            "images": {
                name: {"digest": digests[name], "archive": f"images/{name}.oci.tar"}
                for name in sorted(digests)
            },
            "files": files,
        }
        (work / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        sums = {**files, MANIFEST: sha256_of(work / MANIFEST)}
        (work / SUMS).write_text("".join(f"{digest}  {path}\n" for path, digest in sorted(sums.items())))
        work.rename(out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return manifest


def chart_versions(source: Path = REPO) -> tuple[str, str]:
    chart = yaml.safe_load((source / CHART / "Chart.yaml").read_text())
    return str(chart["version"]), str(chart["appVersion"])


def write_oci_archive(layout: Path, tag: str, archive: IO[bytes]) -> str:
    """The image tagged ``tag`` in an OCI layout, alone, as an OCI archive (a tar of a layout): returns its
    manifest's digest, the image's digest. Entries in a fixed order, without times or owners."""

    def blob(digest: str) -> Path:
        algorithm, hexdigest = digest.split(":", 1)
        return layout / "blobs" / algorithm / hexdigest

    index = json.loads((layout / "index.json").read_text())
    entries = [m for m in index["manifests"] if (m.get("annotations") or {}).get(REF_NAME) == tag]
    if len(entries) != 1:
        raise SystemExit(f"{layout}: {len(entries)} images tagged {tag}, not one")
    [entry] = entries
    manifest = json.loads(blob(entry["digest"]).read_bytes())
    digests = [entry["digest"], manifest["config"]["digest"], *(m["digest"] for m in manifest["layers"])]
    with tarfile.open(fileobj=archive, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in (
            ("oci-layout", json.dumps({"imageLayoutVersion": "1.0.0"}).encode()),
            ("index.json", json.dumps({"schemaVersion": 2, "manifests": [entry]}).encode()),
        ):
            add(tar, name, len(data), io.BytesIO(data))
        for digest in sorted(set(digests)):
            path = blob(digest)
            if sha256_of(path) != digest.split(":", 1)[1]:
                raise SystemExit(f"{path}: its content is not {digest}")
            with path.open("rb") as content:
                add(tar, f"blobs/{digest.replace(':', '/')}", path.stat().st_size, content)
    return str(entry["digest"])


def add(tar: tarfile.TarFile, name: str, size: int, content: IO[bytes]) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = size, 0o644, 0
    tar.addfile(info, content)


def package_chart(helm: Path, digests: dict[str, str], source: Path, out: Path) -> None:
    """helm package of a copy of the chart whose values pin each image to its digest (the comments
    kept: the values file is the chart's documentation)."""
    with tempfile.TemporaryDirectory() as folder:
        chart = Path(folder) / CHART.name
        shutil.copytree(source / CHART, chart)
        values = chart / "values.yaml"
        text = values.read_text()
        for name, path in DIGEST_VALUES.items():
            indent = "  " * len(path)
            line = re.compile(rf'^{indent}digest: ""', re.MULTILINE)
            text, count = line.subn(f'{indent}digest: "{digests[name]}"', text, count=1)
            if count != 1:
                raise SystemExit(f'{values}: no `{indent}digest: ""` line for {".".join(path)}')
        parsed = yaml.safe_load(text)
        for name, path in DIGEST_VALUES.items():
            node = parsed
            for key in path:
                node = node[key]
            if node["digest"] != digests[name]:
                raise SystemExit(f"{values}: {'.'.join(path)}.digest is not where its line was")
        values.write_text(text)
        epoch = int(git(source, "log", "-1", "--format=%ct"))
        for path in (chart, *chart.rglob("*")):  # helm's archive carries each file's time
            os.utime(path, (epoch, epoch))
        subprocess.run([str(helm), "package", str(chart), "--destination", str(out)], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip


def build_wheel(source: Path, out: Path) -> None:
    """The package as a wheel, its files' times the commit's (zip entries carry times)."""
    epoch = git(source, "log", "-1", "--format=%ct")
    with tempfile.TemporaryDirectory() as folder:
        pip = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", folder]
        subprocess.run(
            [*pip, str(source)],
            check=True,
            env={**os.environ, "SOURCE_DATE_EPOCH": epoch},
        )
        [wheel] = Path(folder).glob("*.whl")
        shutil.copy(wheel, out / wheel.name)


def source_state(source: Path) -> str:
    changed = [line for line in git(source, "status", "--porcelain").splitlines() if line]
    return "clean" if not changed else f"modified: git status lists {len(changed)} paths"


def git(source: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(source), *args], capture_output=True, text=True,
                          check=True).stdout.strip()  # fmt: skip


def files_under(folder: Path) -> list[str]:
    return [str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()]


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as content:
        for chunk in iter(lambda: content.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


if __name__ == "__main__":
    sys.exit(main())
