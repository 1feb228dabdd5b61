#!/usr/bin/env bash
# Builds the two images from their Dockerfiles without Docker, as the tests run them:
#   images/build.sh [operator] [job]      (both when none is named)
#   images/build.sh --check               (only say what the machine lacks, one line)
# Each Dockerfile is built by buildah (chroot isolation, no daemon) with BASE set to a Debian 12 rootfs
# that mmdebstrap makes (minbase, without manual pages, docs and locales, as debian:bookworm-slim is):
# the same recipe a Docker user builds, on the base it names. Needs root, buildah and mmdebstrap, and
# reaches Debian's mirror, PyPI and Maven Central.
#
# The images go into one OCI layout in a cache outside the repo, tagged by the hash of their inputs
# (the Dockerfile, what it copies, the base's recipe):
#   ${HBO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hudi-bucket-operator}/images/oci
# so a second run builds nothing. Stdout: one line per image, `NAME oci:LAYOUT:TAG` (skopeo's and
# umoci's way to name it); progress goes to stderr. buildah's layers stay in images/containers, so a
# change of our sources rebuilds from the step that copies them.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=${HBO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hudi-bucket-operator}/images
LAYOUT="$CACHE/oci"
STORAGE=(--root "$CACHE/containers" --runroot "$CACHE/containers-run" --storage-driver overlay)

# The base: Debian 12 as debian:bookworm-slim has it (minbase, merged /usr, dpkg leaving out what slim
# leaves out, the main, updates and security suites).
SUITE=bookworm
MMDEBSTRAP_ARGS=(
  --variant=minbase --mode=root --format=tar
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr
  --dpkgopt='path-exclude=/usr/share/man/*'
  --dpkgopt='path-exclude=/usr/share/doc/*'
  --dpkgopt='path-include=/usr/share/doc/*/copyright'
  --dpkgopt='path-exclude=/usr/share/info/*'
  --dpkgopt='path-exclude=/usr/share/locale/*'
  --aptopt='Acquire::Languages "none"'
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin'
  "$SUITE"
)
MIRRORS=(
  "deb http://deb.debian.org/debian $SUITE main"
  "deb http://deb.debian.org/debian $SUITE-updates main"
  "deb http://deb.debian.org/debian-security $SUITE-security main"
)

# What each image is made from: its Dockerfile and what it copies (README.md is the package's
# description). Listed here once; the tests check that every COPY source is in the list.
declare -A DOCKERFILE=([operator]=Dockerfile.operator [job]=Dockerfile.job)
declare -A INPUTS=(
  [operator]="Dockerfile.operator .dockerignore pyproject.toml constraints.txt README.md operator spark_app"
  [job]="Dockerfile.job .dockerignore pyproject.toml constraints.txt README.md operator spark_app images/job-entrypoint.sh"
)

missing() {
  local tool packages=()
  [ "$(id -u)" = 0 ] || { echo "images/build.sh needs root (mmdebstrap --mode=root, buildah's chroot isolation)"; return; }
  for tool in buildah mmdebstrap; do command -v "$tool" >/dev/null || packages+=("$tool"); done
  [ ${#packages[@]} = 0 ] || echo "${packages[*]} not found: the images are built with them (apt-get install ${packages[*]})"
}

if [ "${1:-}" = --check ]; then missing; exit 0; fi

hash_of() {  # the sha256 of files and folders, by path and content, as COPY and .dockerignore see them
  find "$@" -type f ! -path '*/__pycache__/*' ! -name '*.pyc' ! -path '*/.mypy_cache/*' ! -path '*/.ruff_cache/*' \
    ! -path '*/.pytest_cache/*' -print0 | LC_ALL=C sort -z |
    xargs -0 sha256sum | sha256sum | cut -c1-16
}
BASE_KEY=$(printf '%s\n' "${MMDEBSTRAP_ARGS[@]}" "${MIRRORS[@]}" | sha256sum | cut -c1-16)
BASE_IMAGE="localhost/hudi-bucket-operator-base:$SUITE-$BASE_KEY"

tag_of() {  # operator-<hash>: the image's inputs and its base's recipe
  # shellcheck disable=SC2086
  echo "$1-$( { echo "$BASE_KEY"; hash_of ${INPUTS[$1]}; } | sha256sum | cut -c1-16)"
}
tagged() { [ -f "$LAYOUT/index.json" ] && grep -q "\"$1\"" "$LAYOUT/index.json"; }

names=("$@")
[ ${#names[@]} -gt 0 ] || names=(operator job)
# Each image's tag, hashed once here: sources edited while it builds must not make it name a tag it never
# built (the edit shows in the next run's tag).
declare -A TAG=()
for name in "${names[@]}"; do
  [ -n "${DOCKERFILE[$name]:-}" ] || { echo "images/build.sh: no image named $name (operator, job)" >&2; exit 2; }
  TAG[$name]=$(tag_of "$name")
done

# Nothing to build: say where they are and stop, without asking for any tool.
all_there() {
  local name
  for name in "${names[@]}"; do tagged "${TAG[$name]}" || return 1; done
}
# The manifest blob of a tag in the layout (empty if the tag is not there).
tag_manifest() {
  python3 - "$LAYOUT" "$1" <<'PY'
import json, sys
layout, tag = sys.argv[1], sys.argv[2]
for m in json.load(open(f"{layout}/index.json"))["manifests"]:
    if (m.get("annotations") or {}).get("org.opencontainers.image.ref.name") == tag:
        algorithm, digest = m["digest"].split(":", 1)
        print(f"{layout}/blobs/{algorithm}/{digest}")
PY
}
say() { local name; for name in "${names[@]}"; do echo "$name oci:$LAYOUT:${TAG[$name]}"; done; }
if all_there; then say; exit 0; fi

need=$(missing)
if [ -n "$need" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "images/build.sh: installing buildah and mmdebstrap" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq buildah mmdebstrap; } >/dev/null
  else
    echo "$need" >&2; exit 1
  fi
fi

mkdir -p "$CACHE"
# One build at a time: a second caller waits, then finds the images there.
exec 9>"$CACHE/.build.lock"
flock 9
if all_there; then say; exit 0; fi

work=$(mktemp -d "$CACHE/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
log="$work/build.log"
fail() {
  echo "images/build.sh: $1 failed; the last lines of its log ($log):" >&2
  tail -n 40 "$log" >&2
  trap - EXIT  # keep the log
  exit 1
}

if ! buildah "${STORAGE[@]}" inspect --type image "$BASE_IMAGE" >/dev/null 2>&1; then
  echo "images/build.sh: making the Debian $SUITE base with mmdebstrap (about a minute)" >&2
  started=$SECONDS
  mmdebstrap "${MMDEBSTRAP_ARGS[@]}" "$work/rootfs.tar" "${MIRRORS[@]}" >"$log" 2>&1 || fail "mmdebstrap"
  {
    container=$(buildah "${STORAGE[@]}" from scratch)
    buildah "${STORAGE[@]}" add "$container" "$work/rootfs.tar" /
    buildah "${STORAGE[@]}" config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      --cmd bash "$container"
    buildah "${STORAGE[@]}" commit --rm "$container" "$BASE_IMAGE"
  } >>"$log" 2>&1 || fail "importing the base into buildah"
  rm -f "$work/rootfs.tar"
  echo "images/build.sh: base $BASE_IMAGE in $((SECONDS - started)) s" >&2
fi

# A machine whose egress re-signs TLS (as these do) trusts its own CA: pip in the RUN steps is given the
# machine's bundle through the recipes' PIP_CERT, mounted on /mnt for those steps only (nothing stays).
trust=()
ca=${PIP_CERT:-${SSL_CERT_FILE:-${REQUESTS_CA_BUNDLE:-}}}
if [ -n "$ca" ] && [ -f "$ca" ]; then
  trust=(--volume "$(dirname "$(realpath "$ca")"):/mnt:ro" --build-arg "PIP_CERT=/mnt/$(basename "$(realpath "$ca")")")
fi

for name in "${names[@]}"; do
  tag=${TAG[$name]}
  tagged "$tag" && continue
  echo "images/build.sh: building $name from ${DOCKERFILE[$name]} ($tag; minutes the first time)" >&2
  started=$SECONDS
  buildah "${STORAGE[@]}" build --isolation chroot --layers --build-arg "BASE=$BASE_IMAGE" "${trust[@]}" \
    -f "${DOCKERFILE[$name]}" -t "localhost/hudi-bucket-operator-build:$tag" . >"$log" 2>&1 ||
    fail "buildah build of ${DOCKERFILE[$name]}"
  built=$SECONDS
  # Into the shared layout: layers it holds already (the base's, an earlier build's) are not written again.
  mkdir -p "$LAYOUT"
  buildah "${STORAGE[@]}" push "localhost/hudi-bucket-operator-build:$tag" "oci:$LAYOUT:$tag" >>"$log" 2>&1 ||
    fail "buildah push of $name"
  # sed, not head: head would close the pipe on buildah listing more than one line (SIGPIPE: 141 under pipefail)
  size=$(buildah "${STORAGE[@]}" images --format '{{.Size}}' "localhost/hudi-bucket-operator-build:$tag" | sed -n 1p)
  echo "images/build.sh: $name built in $((built - started)) s, stored in $((SECONDS - built)) s ($size)" >&2
  # Earlier builds of this image are not needed again (a checkout of their sources rebuilds its own), once
  # a day old: a younger one may be another checkout's, whose run is loading it now (one HBO_CACHE, two
  # checkouts). Its age is its manifest's, as pushed.
  for old in $(grep -o "\"$name-[0-9a-f]\{16\}\"" "$LAYOUT/index.json" | tr -d '"' | sort -u); do
    [ "$old" = "$tag" ] && continue
    manifest=$(tag_manifest "$old")
    [ -n "$manifest" ] && [ -n "$(find "$manifest" -mmin +1440 2>/dev/null)" ] || continue
    umoci rm --image "$LAYOUT:$old" 2>/dev/null || true
    buildah "${STORAGE[@]}" rmi "localhost/hudi-bucket-operator-build:$old" >/dev/null 2>&1 || true
  done
done
command -v umoci >/dev/null && umoci gc --layout "$LAYOUT" 2>/dev/null || true
say
