#!/usr/bin/env bash
# Builds the S3-compatible server the object-store tests run (Versity's S3 gateway, versitygw, with its
# posix backend: a real S3 API server over a local folder) from source, through the Go module proxy,
# into a cache folder outside the repo, once per version (tests/lib/go_install.sh says where and how):
#   build.sh            -> the bin folder holding versitygw (the last line on stdout)
#   build.sh --check    -> what the machine lacks to build it (one line, exit 1), or nothing
# The first build took 127 s on 2 cores (about 340 MB of modules, 430 MB of Go build cache).
set -euo pipefail
# github.com/versity/versitygw needs Go 1.25 or newer; its go.mod has no replace lines.
exec bash "$(dirname "$0")/../lib/go_install.sh" versitygw github.com/versity/versitygw/cmd/versitygw v1.8.0 25 "$@"
