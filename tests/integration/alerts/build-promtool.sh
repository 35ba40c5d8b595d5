#!/usr/bin/env bash
# Build Prometheus's promtool (for `promtool check rules` / `promtool test rules` on the drsched alerts)
# from the Go module proxy into a cache outside the clone, like harness/controlplane/build.sh:
#
#   ${DRSCHED_CACHE:-$HOME/.cache/drsched}/tools/promtool-<version>/promtool
#
# The version is pinned here (one place to bump); a stamp keyed by it and this script makes a second run a
# no-op. GOMODCACHE and GOCACHE stay at Go's defaults, shared with the control-plane build.
#
# Usage: build-promtool.sh            build if needed, then print the binary's path (last line of stdout)
#        build-promtool.sh --path     print the binary's path and exit (builds nothing, needs no Go)
set -euo pipefail

version=v0.316.0  # github.com/prometheus/prometheus module version (Prometheus 3.x)
cache_root=${DRSCHED_CACHE:-$HOME/.cache/drsched}
out_dir=$cache_root/tools/promtool-$version
binary=$out_dir/promtool
stamp_file=$out_dir/stamp

case "${1:-}" in
    --path) echo "$binary"; exit 0 ;;
    "") ;;
    *) echo "usage: $0 [--path]" >&2; exit 2 ;;
esac

stamp_key() { { echo "promtool=$version"; cat "${BASH_SOURCE[0]}"; } | sha256sum | cut -d' ' -f1; }
up_to_date() { [[ -x "$binary" && -f "$stamp_file" && "$(cat "$stamp_file")" == "$(stamp_key)" ]]; }

if up_to_date; then
    echo "build-promtool.sh: promtool $version already built" >&2
    echo "$binary"
    exit 0
fi

command -v go >/dev/null || PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || { echo "build-promtool.sh: no 'go' on PATH" >&2; exit 2; }

mkdir -p "$out_dir"
exec 9>"$out_dir/.lock"  # two test sessions must not build into the same dir at once
flock 9
if up_to_date; then
    echo "$binary"
    exit 0
fi
staging=$(mktemp -d "$out_dir/.build.XXXXXX")
trap 'rm -rf "$staging"' EXIT
echo "build-promtool.sh: building promtool $version (go $(go env GOVERSION))" >&2
SECONDS=0
# -mod=mod: the module's own go.mod decides its dependencies, whatever GOFLAGS the caller has.
GOBIN=$staging GOFLAGS=-mod=mod go install -ldflags "-s -w" \
    "github.com/prometheus/prometheus/cmd/promtool@$version"
mv "$staging/promtool" "$binary"
stamp_key >"$stamp_file"
echo "build-promtool.sh: built in ${SECONDS}s" >&2
echo "$binary"
