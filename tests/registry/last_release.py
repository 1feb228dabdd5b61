"""The last release, as the upgrade tests install it: the changelog's newest released version and the
commit it names, checked out from the repository's history into the cache once, its two images built
by that commit's own images/build.sh (sharing buildah's layers with ours: only what changed since is
built again, about a minute).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[2]
_SECTION = re.compile(r"^## \[(?P<version>[^\]]+)\] - (?P<date>\S+)$", re.MULTILINE)
_COMMIT = re.compile(r"commit `(?P<commit>[0-9a-f]{7,40})`")


class Release(NamedTuple):
    version: str
    commit: str


def changelog_sections(changelog: str) -> dict[str, str]:
    """Each release's section of CHANGELOG.md, by version, newest first."""
    heads = list(_SECTION.finditer(changelog))
    ends = [h.start() for h in heads[1:]] + [len(changelog)]
    return {h["version"]: changelog[h.start() : end] for h, end in zip(heads, ends, strict=True)}


def last_release(changelog: str | None = None) -> Release:
    """The newest section that is released (not "unreleased"), and the commit it names."""
    text = changelog if changelog is not None else (REPO / "CHANGELOG.md").read_text()
    for version, section in changelog_sections(text).items():
        if _SECTION.match(section)["date"] != "unreleased":  # type: ignore[index]
            named = _COMMIT.search(section)
            if named is None:
                raise RuntimeError(f"CHANGELOG.md: release {version} names no commit")
            return Release(version, named["commit"])
    raise RuntimeError("CHANGELOG.md: no release yet")


def cache_dir() -> Path:
    cache = os.environ.get("HBO_CACHE") or Path(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "hudi-bucket-operator"
    )
    return Path(cache) / "releases"


def source(release: Release) -> Path:
    """A work tree of the release's commit (a clone of this repository, so that its tools see a git
    tree), made once into the cache."""
    folder = cache_dir() / f"{release.version}-{release.commit}"
    folder.parent.mkdir(parents=True, exist_ok=True)
    with (folder.parent / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # ./dev's background run and the tests' may meet here
        if not (folder / ".git").is_dir():
            _git(REPO, "cat-file", "-e", f"{release.commit}^{{commit}}",
                 why=f"release {release.version}'s commit {release.commit} is not in this clone's history "
                     "(a shallow clone? fetch it: git fetch --unshallow)")  # fmt: skip
            partial = folder.with_name(folder.name + ".partial")
            subprocess.run(["rm", "-rf", str(partial)], check=True)
            _git(REPO, "clone", "--quiet", "--no-checkout", str(REPO), str(partial))
            _git(partial, "checkout", "--quiet", "--detach", release.commit)
            partial.rename(folder)
    return folder


def build_images(tree: Path) -> dict[str, str]:
    """The tree's images, built by its own images/build.sh into the shared cache: {name: 'LAYOUT:TAG'}.
    Its progress goes to a log in the cache, whose end a failure says."""
    script = tree / "images" / "build.sh"
    log = cache_dir() / "build.log"
    with log.open("w") as written:
        result = subprocess.run(
            ["bash", str(script)], stdout=subprocess.PIPE, stderr=written, text=True, check=False
        )
    if result.returncode != 0:
        raise RuntimeError(
            f"{script} exited {result.returncode}; the end of {log}:\n{log.read_text()[-3000:]}"
        )
    built = dict(line.split(" ", 1) for line in result.stdout.strip().splitlines())
    return {name: reference.removeprefix("oci:") for name, reference in built.items()}


def keep_young(images: dict[str, str]) -> None:
    """Marks the images ({name: 'LAYOUT:TAG'}) as just built: a release's images/build.sh drops builds of an
    image once their manifest is a day old, and these are in use."""
    for reference in images.values():
        layout, tag = reference.rsplit(":", 1)
        index = json.loads(Path(layout, "index.json").read_text())
        for manifest in index["manifests"]:
            if (manifest.get("annotations") or {}).get("org.opencontainers.image.ref.name") == tag:
                algorithm, digest = manifest["digest"].split(":", 1)
                os.utime(Path(layout, "blobs", algorithm, digest))


def _git(where: Path, *args: str, why: str = "") -> None:
    done = subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(why or f"git {' '.join(args)}: {done.stderr.strip()}")
