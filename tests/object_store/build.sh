#!/usr/bin/env bash
# Builds the S3-compatible server the object-store tests run (Versity's S3 gateway, versitygw, with its
# posix backend: a real S3 API server over a local folder) from source, through the Go module proxy,
# into a cache folder outside the repo, once per version:
#   ${HBO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hudi-bucket-operator}/versitygw-<version>/bin/versitygw
# The last line on stdout is always that bin folder; progress goes to stderr. When the binary is there
# already it prints only that line; with --check it prints what the machine lacks to build it (one line,
# exit 1), or nothing. Same shape as tests/e2e/control_plane/build.sh. The first build took 127 s on 2
# cores (it downloads about 340 MB of modules and fills about 430 MB of Go build cache).
set -euo pipefail

VERSITYGW_VERSION=v1.8.0  # github.com/versity/versitygw; its go.mod has no replace lines, so `go install` works

CACHE=${HBO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hudi-bucket-operator}
TARGET="$CACHE/versitygw-$VERSITYGW_VERSION"
# Written last, inside the folder that is then renamed into place: the proof of a complete build.
STAMP="versitygw=$VERSITYGW_VERSION"

built() { [ "$(cat "$TARGET/versions" 2>/dev/null)" = "$STAMP" ]; }

# The machine's own Go, never one fetched behind our back (versitygw needs Go 1.25 or newer).
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS=-mod=mod
GO_MIN_MINOR=25
go_problem() {
  local found minor
  command -v go >/dev/null || {
    echo "go not found: the object-store tests build versitygw $VERSITYGW_VERSION from source with Go 1.$GO_MIN_MINOR or newer (https://go.dev/dl/)"
    return
  }
  found=$(go env GOVERSION)
  minor=$(echo "$found" | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
  [ "${minor:-0}" -ge "$GO_MIN_MINOR" ] ||
    echo "$found found: versitygw $VERSITYGW_VERSION needs Go 1.$GO_MIN_MINOR or newer (https://go.dev/dl/)"
}

if [ "${1:-}" = --check ]; then
  problem=$(built || go_problem)
  [ -z "$problem" ] || { echo "$problem"; exit 1; }
  exit 0
fi
if built; then echo "$TARGET/bin"; exit 0; fi

mkdir -p "$CACHE"
# One build at a time: a second caller waits, then finds the binary there.
if command -v flock >/dev/null; then
  exec 9>"$CACHE/.versitygw-build.lock"
  flock 9
  if built; then echo "$TARGET/bin"; exit 0; fi
fi

problem=$(go_problem)
if [ -n "$problem" ]; then echo "build.sh: $problem" >&2; exit 1; fi
work=$(mktemp -d "$CACHE/.build-versitygw-$VERSITYGW_VERSION.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Go caches of the build's own, deleted with it (as tests/e2e/control_plane/build.sh does).
export GOCACHE="${GOCACHE:-$work/go-build}" GOMODCACHE="${GOMODCACHE:-$work/go-mod}" GOFLAGS="${GOFLAGS:+$GOFLAGS }-modcacherw"
log="$work/build.log"
echo "build.sh: building versitygw $VERSITYGW_VERSION with $(go env GOVERSION) into $TARGET (about 2 minutes on 2 idle cores)" >&2
mkdir -p "$work/out/bin"
started=$SECONDS
(
  cd "$work"  # outside any module, so `go install pkg@version` resolves through the proxy
  GOBIN="$work/out/bin" go install -trimpath -ldflags="-s -w" \
    "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"
) > "$log" 2>&1 || {
  echo "build.sh: building versitygw failed; the last lines of its log:" >&2
  tail -n 40 "$log" >&2
  exit 1
}

echo "$STAMP" > "$work/out/versions"
if [ -e "$TARGET" ]; then mv -T "$TARGET" "$work/previous"; fi
mv -T "$work/out" "$TARGET"
echo "build.sh: built in $((SECONDS - started)) s" >&2
echo "$TARGET/bin"
