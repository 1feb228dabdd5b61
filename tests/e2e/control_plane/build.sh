#!/usr/bin/env bash
# Builds the Kubernetes control plane that the e2e tests run (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler) and the node's kubelet, kube-proxy and pause binary (tests/e2e/node) from
# source, through the Go module proxy, into a cache folder outside the repo, once per version:
#   ${HBO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hudi-bucket-operator}/kube-<version>/bin/
# The last line on stdout is always that bin folder; progress goes to stderr. When the binaries are
# there already it prints only that line; with --check it prints what the machine lacks to build them
# (one line, exit 1), or nothing. A build takes about 6 minutes on 2 idle cores (12 CPU-minutes; it
# downloads about 0.8 GB of modules and fills about 3 GB of Go build cache). Those Go caches are the
# build's own, deleted with it: every build starts from nothing, whatever the machine's Go caches hold,
# and leaves only its binaries (an exported GOCACHE or GOMODCACHE is used and kept instead).
set -euo pipefail

KUBE_VERSION=v1.36.3  # k8s.io/kubernetes; its staging modules are published as v0.<minor>.<patch>
ETCD_VERSION=v3.6.8   # what k8s.io/kubernetes $KUBE_VERSION requires of go.etcd.io/etcd/client/v3
GO_MINOR=1.26         # the .go-version in the k8s.io/kubernetes module zip (1.26.5): a newer Go built an
                      # apiserver whose OpenAPI was broken, so every `kubectl apply` failed

STAGING_VERSION="v0.${KUBE_VERSION#v1.}"
CACHE=${HBO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hudi-bucket-operator}
TARGET="$CACHE/kube-$KUBE_VERSION"
# Written last, inside the folder that is then renamed into place: its content is the proof of a
# complete build of exactly these versions.
KUBE_COMMANDS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy)
STAMP="kubernetes=$KUBE_VERSION etcd=$ETCD_VERSION go=$GO_MINOR commands=${KUBE_COMMANDS[*]} pause"

built() { [ "$(cat "$TARGET/versions" 2>/dev/null)" = "$STAMP" ]; }

# The machine's own Go, never one fetched behind our back; it must be the minor Kubernetes names.
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0
go_problem() {
  local found
  command -v go >/dev/null || {
    echo "go not found: the e2e tests build Kubernetes $KUBE_VERSION from source with Go $GO_MINOR.x (https://go.dev/dl/)"
    return
  }
  found=$(go env GOVERSION)
  case "$found" in
    "go$GO_MINOR" | "go$GO_MINOR".*) ;;
    *) echo "$found found: Kubernetes $KUBE_VERSION must be built with Go $GO_MINOR.x, its .go-version (https://go.dev/dl/)" ;;
  esac
}
gcc_problem() {  # the pause binary is C, linked statically as Kubernetes builds it
  command -v gcc >/dev/null || echo "gcc not found: the node's pause binary is built with it (apt-get install gcc libc6-dev)"
}

if [ "${1:-}" = --check ]; then
  problem=$(built || { go_problem; gcc_problem; })
  [ -z "$problem" ] || { echo "$problem"; exit 1; }
  exit 0
fi
if built; then echo "$TARGET/bin"; exit 0; fi

mkdir -p "$CACHE"
# One build at a time: a second caller waits, then finds the binaries there.
if command -v flock >/dev/null; then
  exec 9>"$CACHE/.kube-build.lock"
  flock 9
  if built; then echo "$TARGET/bin"; exit 0; fi
fi

problem=$(go_problem; gcc_problem)
if [ -n "$problem" ]; then echo "build.sh: $problem" >&2; exit 1; fi
go_version=$(go env GOVERSION)

work=$(mktemp -d "$CACHE/.build-kube-$KUBE_VERSION.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GOCACHE="${GOCACHE:-$work/go-build}" GOMODCACHE="${GOMODCACHE:-$work/go-mod}" GOFLAGS="${GOFLAGS:+$GOFLAGS }-modcacherw"
log="$work/build.log"
fail() {
  echo "build.sh: $1 failed; the last lines of its log:" >&2
  tail -n 40 "$log" >&2
  exit 1
}
echo "build.sh: building etcd $ETCD_VERSION and Kubernetes $KUBE_VERSION with $go_version into $TARGET (about 6 minutes on 2 idle cores)" >&2
mkdir -p "$work/out/bin" "$work/kube" "$work/etcd"
started=$SECONDS

# Kubernetes: a throwaway module requiring k8s.io/kubernetes. Its go.mod points the staging modules at
# ./staging, which is not in the module zip, so map each one to its published version instead.
cd "$work"  # outside any module, so `go list -m` asks the proxy
read -r kube_mod build_date < <(go list -m -f '{{.GoMod}} {{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' \
  "k8s.io/kubernetes@$KUBE_VERSION" 2>"$log") || fail "looking up k8s.io/kubernetes@$KUBE_VERSION"
{
  printf 'module hudi-bucket-operator.local/kube-build\n\ngo %s.0\n\nreplace (\n' "$GO_MINOR"
  sed -n "s#^[[:space:]]*\(k8s.io/[A-Za-z0-9._-]*\) => ./staging/.*#\t\1 => \1 $STAGING_VERSION#p" "$kube_mod"
  printf ')\n'
} > "$work/kube/go.mod"
grep -q "k8s.io/apiserver => " "$work/kube/go.mod" || { echo "build.sh: no staging replaces found in $kube_mod" >&2; exit 1; }

# Same version variables as Kubernetes' own release build, so `--version` and /version say $KUBE_VERSION.
minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$build_date"
done

packages=("${KUBE_COMMANDS[@]/#/k8s.io/kubernetes/cmd/}")
(
  cd "$work/kube"
  go get "${packages[@]/%/@$KUBE_VERSION}"
  go build -trimpath -ldflags="$ldflags" -o "$work/out/bin/" "${packages[@]}"
) > "$log" 2>&1 || fail "building ${KUBE_COMMANDS[*]}"

# The pause binary every pod's sandbox runs, from the C source in the same module tree, static as
# Kubernetes' own pause image has it (the node packs it into an image for containerd).
pause_src="$(cd "$work/kube" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)/build/pause/linux/pause.c"
gcc -Os -Wall -Werror -static -DVERSION="$KUBE_VERSION" -o "$work/out/bin/pause" "$pause_src" >> "$log" 2>&1 ||
  fail "building pause"
strip "$work/out/bin/pause"

# etcd: its main package is the root of go.etcd.io/etcd/server/v3, built from a throwaway module too
# (its own go.mod has replace lines, so `go install pkg@version` refuses it).
printf 'module hudi-bucket-operator.local/etcd-build\n\ngo %s.0\n' "$GO_MINOR" > "$work/etcd/go.mod"
(
  cd "$work/etcd"
  go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
  go build -trimpath -ldflags="-s -w" -o "$work/out/bin/etcd" go.etcd.io/etcd/server/v3
) >> "$log" 2>&1 || fail "building etcd"

echo "$STAMP" > "$work/out/versions"
# A stale build of other versions is moved aside first; mv -T renames and never moves into a folder.
if [ -e "$TARGET" ]; then mv -T "$TARGET" "$work/previous"; fi
mv -T "$work/out" "$TARGET"
echo "build.sh: built in $((SECONDS - started)) s" >&2
echo "$TARGET/bin"
