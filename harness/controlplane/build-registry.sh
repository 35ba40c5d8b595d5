#!/usr/bin/env bash
# Build the CNCF distribution registry (github.com/distribution/distribution/v3/cmd/registry, pinned in
# registry/go.mod beside this script as a `tool`) from the Go module proxy into a cache outside the clone:
#
#   ${DRSCHED_CACHE:-$HOME/.cache/drsched}/registry/<version>-<stamp>/bin/registry
#
# The deploy guide's e2e test (tests/e2e/realnodes/test_deploy_guide.py) and the push integration test
# run it on 127.0.0.1 (harness/registry.py) so images are pushed and pulled, not imported. Stamp (the pinned
# version, go.mod/go.sum, this script) and lock as build.sh's: lib.sh. GOMODCACHE and GOCACHE stay at Go's
# defaults under $HOME. The build's output goes to build.log beside the bin dir; progress lines to stderr.
#
# Usage: build-registry.sh            build if needed, then print the bin dir (last line of stdout)
#        build-registry.sh --bin-dir  print the bin dir and exit (builds nothing, needs no Go)
#        build-registry.sh --force    rebuild even when the stamp matches
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/registry
package=github.com/distribution/distribution/v3/cmd/registry

. "$(dirname "$here")/lib.sh"
name=build-registry.sh
binaries=(registry)

version=$(pinned "$here/go.mod" github.com/distribution/distribution/v3)
if [[ -z "$version" ]]; then
    echo "build-registry.sh: cannot read the pinned distribution version from $here/go.mod" >&2
    exit 2
fi

stamp_inputs() { echo "distribution=$version"; cat "$here/go.mod" "$here/go.sum" "${BASH_SOURCE[0]}"; }
extra_ready() { true; }

build_prepare registry "$version" "$@"

step="registry"
: >"$log_file"
# Static and without symbol tables: one file the tests start on 127.0.0.1.
(cd "$here" && CGO_ENABLED=0 go build -v -trimpath -buildvcs=false -ldflags "-s -w" -o "$staging/registry" "$package") \
    >>"$log_file" 2>&1 || { echo "build-registry.sh: go build failed (tail of $log_file below)" >&2; tail -n 25 "$log_file" >&2; false; }
echo "build-registry.sh: registry built at ${SECONDS}s" >&2

build_install
