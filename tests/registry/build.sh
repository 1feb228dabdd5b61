#!/usr/bin/env bash
# Builds the OCI registry the release tests push to and the test node pulls from: go-containerregistry's
# crane (`crane registry serve`: a real registry API over a folder; `crane push`, `crane digest`), from
# source through the Go module proxy, into a cache folder outside the repo, once per version
# (tests/lib/go_install.sh says where and how):
#   build.sh            -> the bin folder holding crane (the last line on stdout)
#   build.sh --check    -> what the machine lacks to build it (one line, exit 1), or nothing
# The first build took 20 s on 2 cores.
set -euo pipefail
exec bash "$(dirname "$0")/../lib/go_install.sh" crane github.com/google/go-containerregistry/cmd/crane v0.22.1 25 "$@"
