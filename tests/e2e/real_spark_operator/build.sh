#!/usr/bin/env bash
# Builds the Kubeflow Spark Operator (its `spark-operator` binary: controller and webhook) from the release
# source in ../shared/vendor/ (the Spark Operator is not on the Go module proxy; its dependencies are),
# into a cache folder outside the repo, once per release:
#   ${HBO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hudi-bucket-operator}/spark-operator-<version>/
# holding bin/spark-operator, crds/ (the release's own CRDs), chart/ (its Helm chart) and entrypoint.sh
# (its image's entrypoint, which the tests' image of the controller runs as its Dockerfile says). The last line
# on stdout is always that folder; progress goes to stderr. With --check it prints what the machine lacks
# (one line, exit 1), or nothing. 3 to 4 minutes on 2 cores the first time; its Go caches are its own and
# deleted with it, as in control_plane/build.sh.
set -euo pipefail

VERSION=v2.5.2
SHARED=${HUDI_BUCKET_SHARED:-$(cd "$(dirname "$0")/../../../.." && pwd)/shared}
ARCHIVE="$SHARED/vendor/kubeflow-spark-operator-$VERSION.tar.gz"
CACHE=${HBO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hudi-bucket-operator}
TARGET="$CACHE/spark-operator-$VERSION"
STAMP="spark-operator=$VERSION with crds, chart and entrypoint"

built() { [ "$(cat "$TARGET/version" 2>/dev/null)" = "$STAMP" ]; }

export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0
problem() {
  [ -f "$ARCHIVE" ] || { echo "$ARCHIVE not found: the real Spark Operator is built from ../shared/vendor"; return; }
  command -v go >/dev/null || echo "go not found: the Spark Operator $VERSION is built from source with Go (https://go.dev/dl/)"
}

if [ "${1:-}" = --check ]; then
  found=$(built || problem)
  [ -z "$found" ] || { echo "$found"; exit 1; }
  exit 0
fi
if built; then echo "$TARGET"; exit 0; fi

mkdir -p "$CACHE"
exec 9>"$CACHE/.spark-operator-build.lock"  # one build at a time; a second caller finds it built
flock 9
if built; then echo "$TARGET"; exit 0; fi
found=$(problem)
if [ -n "$found" ]; then echo "build.sh: $found" >&2; exit 1; fi

work=$(mktemp -d "$CACHE/.build-spark-operator-$VERSION.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GOCACHE="${GOCACHE:-$work/go-build}" GOMODCACHE="${GOMODCACHE:-$work/go-mod}" GOFLAGS="${GOFLAGS:+$GOFLAGS }-modcacherw"
log="$work/build.log"
echo "build.sh: building the Spark Operator $VERSION with $(go env GOVERSION) into $TARGET (about 4 minutes)" >&2
started=$SECONDS
tar -xzf "$ARCHIVE" -C "$work"
source_dir="$work/spark-operator-$VERSION"
mkdir -p "$work/out/bin" "$work/out/crds"
# The version variables its Makefile sets, so `spark-operator version` names the release.
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$VERSION"
ldflags+=" -X k8s.io/component-base/version.gitCommit=43afb8bbd32463037d8fb6e414e252c69081882b"
ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"
(cd "$source_dir" && go build -trimpath -ldflags="$ldflags" -o "$work/out/bin/spark-operator" ./cmd/operator) \
  > "$log" 2>&1 || {
  echo "build.sh: go build failed; the last lines of its log:" >&2
  tail -n 40 "$log" >&2
  exit 1
}
cp "$source_dir"/charts/spark-operator-chart/crds/*.yaml "$work/out/crds/"
cp -r "$source_dir/charts/spark-operator-chart" "$work/out/chart"  # the tests install it, or render its RBAC
cp "$source_dir/entrypoint.sh" "$work/out/entrypoint.sh"
echo "$STAMP" > "$work/out/version"
if [ -e "$TARGET" ]; then mv -T "$TARGET" "$work/previous"; fi
mv -T "$work/out" "$TARGET"
echo "build.sh: built in $((SECONDS - started)) s" >&2
echo "$TARGET"
