#!/usr/bin/env bash
# Builds one Go command from its module, through the Go module proxy, into a cache folder outside the
# repo, once per version (the tests' S3 server and OCI registry are built so):
#   go_install.sh NAME PACKAGE VERSION GO_MIN_MINOR [--check]
#   -> ${HBO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hudi-bucket-operator}/NAME-VERSION/bin/
# The last line on stdout is always that bin folder; progress goes to stderr. When the binary is there
# already it prints only that line; with --check it prints what the machine lacks to build it (one line,
# exit 1), or nothing. The module must have no replace lines (`go install pkg@version` refuses those).
set -euo pipefail

NAME=$1 PACKAGE=$2 VERSION=$3 GO_MIN_MINOR=$4
CACHE=${HBO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hudi-bucket-operator}
TARGET="$CACHE/$NAME-$VERSION"
# Written last, inside the folder that is then renamed into place: the proof of a complete build.
STAMP="$NAME=$VERSION"

built() { [ "$(cat "$TARGET/versions" 2>/dev/null)" = "$STAMP" ]; }

# The machine's own Go, never one fetched behind our back.
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS=-mod=mod
go_problem() {
  local found minor
  command -v go >/dev/null || {
    echo "go not found: the tests build $NAME $VERSION from source with Go 1.$GO_MIN_MINOR or newer (https://go.dev/dl/)"
    return
  }
  found=$(go env GOVERSION)
  minor=$(echo "$found" | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
  [ "${minor:-0}" -ge "$GO_MIN_MINOR" ] ||
    echo "$found found: $NAME $VERSION needs Go 1.$GO_MIN_MINOR or newer (https://go.dev/dl/)"
}

if [ "${5:-}" = --check ]; then
  problem=$(built || go_problem)
  [ -z "$problem" ] || { echo "$problem"; exit 1; }
  exit 0
fi
if built; then echo "$TARGET/bin"; exit 0; fi

mkdir -p "$CACHE"
# One build at a time: a second caller waits, then finds the binary there.
if command -v flock >/dev/null; then
  exec 9>"$CACHE/.$NAME-build.lock"
  flock 9
  if built; then echo "$TARGET/bin"; exit 0; fi
fi

problem=$(go_problem)
if [ -n "$problem" ]; then echo "go_install.sh: $problem" >&2; exit 1; fi
work=$(mktemp -d "$CACHE/.build-$NAME-$VERSION.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Go caches of the build's own, deleted with it (as tests/e2e/control_plane/build.sh does).
export GOCACHE="${GOCACHE:-$work/go-build}" GOMODCACHE="${GOMODCACHE:-$work/go-mod}" GOFLAGS="${GOFLAGS:+$GOFLAGS }-modcacherw"
log="$work/build.log"
echo "go_install.sh: building $NAME $VERSION with $(go env GOVERSION) into $TARGET" >&2
mkdir -p "$work/out/bin"
started=$SECONDS
(
  cd "$work"  # outside any module, so `go install pkg@version` resolves through the proxy
  GOBIN="$work/out/bin" go install -trimpath -ldflags="-s -w" "$PACKAGE@$VERSION"
) > "$log" 2>&1 || {
  echo "go_install.sh: building $NAME failed; the last lines of its log:" >&2
  tail -n 40 "$log" >&2
  exit 1
}

echo "$STAMP" > "$work/out/versions"
if [ -e "$TARGET" ]; then mv -T "$TARGET" "$work/previous"; fi
mv -T "$work/out" "$TARGET"
echo "go_install.sh: built $NAME in $((SECONDS - started)) s" >&2
echo "$TARGET/bin"
