#!/usr/bin/env bash
# Build the CNCF distribution registry (github.com/distribution/distribution/v3/cmd/registry, pinned in
# registry/go.mod beside this script as a `tool`) from the Go module proxy into a cache outside the clone:
#
#   ${DRSCHED_CACHE:-$HOME/.cache/drsched}/registry/<version>/bin/registry
#
# The deploy guide's e2e test (tests/e2e/realnodes/test_deploy_guide.py) and the push integration test
# run it on 127.0.0.1 (harness/registry.py) so images are pushed and pulled, not imported. Same shape as
# build.sh: a stamp keyed by the pinned version, go.mod/go.sum and this script makes a
# second run a no-op; one build at a time (flock); GOMODCACHE and GOCACHE stay at Go's defaults under $HOME.
# The build's output goes to build.log beside the binary; progress lines to stderr.
#
# Usage: build.sh               build if needed, then print the bin dir (last line of stdout)
#        build.sh --bin-dir     print the bin dir and exit (builds nothing, needs no Go)
#        build.sh --force       rebuild even when the stamp matches
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/registry
package=github.com/distribution/distribution/v3/cmd/registry

pinned() { grep -oE "^[[:space:]]*(require[[:space:]]+)?$2 v[^ ]+" "$1" | awk '{print $NF}' | head -n1; }
version=$(pinned "$here/go.mod" github.com/distribution/distribution/v3)
if [[ -z "$version" ]]; then
    echo "build-registry.sh: cannot read the pinned distribution version from $here/go.mod" >&2
    exit 2
fi

cache_root=${DRSCHED_CACHE:-$HOME/.cache/drsched}
out_dir=$cache_root/registry/$version
bin_dir=$out_dir/bin
stamp_file=$out_dir/stamp
log_file=$out_dir/build.log

case "${1:-}" in
    --bin-dir) echo "$bin_dir"; exit 0 ;;
    --force) force=1 ;;
    "") force=0 ;;
    *) echo "usage: $0 [--bin-dir|--force]" >&2; exit 2 ;;
esac

stamp_key() {
    { echo "distribution=$version"; cat "$here/go.mod" "$here/go.sum" "${BASH_SOURCE[0]}"; } | sha256sum | cut -d' ' -f1
}

up_to_date() {
    [[ -f "$stamp_file" && "$(cat "$stamp_file")" == "$(stamp_key)" && -x "$bin_dir/registry" ]]
}

if [[ $force == 0 ]] && up_to_date; then
    echo "build-registry.sh: registry $version already built" >&2
    echo "$bin_dir"
    exit 0
fi

command -v go >/dev/null || PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || { echo "build-registry.sh: no 'go' on PATH (need Go >= 1.26)" >&2; exit 2; }

mkdir -p "$out_dir"
exec 9>"$out_dir/.lock"
flock 9
if [[ $force == 0 ]] && up_to_date; then  # another process finished the build while we waited
    echo "$bin_dir"
    exit 0
fi

staging=$(mktemp -d "$out_dir/.build.XXXXXX")
trap 'rm -rf "$staging"' EXIT
trap 'echo "build-registry.sh: FAILED after ${SECONDS}s (tail of $log_file below)" >&2; tail -n 25 "$log_file" >&2' ERR

echo "build-registry.sh: building registry $version into $bin_dir (log $log_file)" >&2
echo "build-registry.sh: go $(go env GOVERSION), GOMODCACHE=$(go env GOMODCACHE), GOCACHE=$(go env GOCACHE)" >&2
SECONDS=0
: >"$log_file"
# Static and without symbol tables: one file the tests start on 127.0.0.1.
(cd "$here" && CGO_ENABLED=0 go build -v -trimpath -buildvcs=false -ldflags "-s -w" -o "$staging/registry" "$package") \
    >>"$log_file" 2>&1
echo "build-registry.sh: registry built at ${SECONDS}s" >&2

rm -rf "$bin_dir"
mv "$staging" "$bin_dir"
chmod 755 "$bin_dir"
stamp_key >"$stamp_file"
trap - ERR

echo "build-registry.sh: built in ${SECONDS}s ($(du -m "$bin_dir/registry" | cut -f1) MB)" >&2
echo "$bin_dir"
