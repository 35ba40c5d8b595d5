#!/usr/bin/env bash
# Build the real-node binaries (kubelet, kube-controller-manager, kube-proxy, our static pause program
# for the pod sandbox image and `busy`, the tests' CPU load) from the same Go module as build.sh, into
# their own cache dir (the module is nodes/, with the same replace block as build.sh's go.mod):
#
#   ${DRSCHED_CACHE:-$HOME/.cache/drsched}/nodes/<k8s version>-<stamp>/bin/
#
# Separate from build.sh on purpose: its own stamp and lock, so building node binaries never
# invalidates (or waits on) the control-plane build that the KWOK tests use. Stamp and lock: lib.sh.
#
# Usage: build-nodes.sh            build if needed, then print the bin dir (last line of stdout)
#        build-nodes.sh --bin-dir  print the bin dir and exit (builds nothing, needs no Go)
#        build-nodes.sh --force    rebuild even when the stamp matches
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
module=$here/nodes
binaries=(kubelet kube-controller-manager kube-proxy pause busy)

. "$here/lib.sh"
name=build-nodes.sh

k8s_version=$(pinned "$module/go.mod" k8s.io/kubernetes)
if [[ -z "$k8s_version" ]]; then
    echo "build-nodes.sh: cannot read the pinned k8s.io/kubernetes version from $module/go.mod" >&2
    exit 2
fi

stamp_inputs() {
    echo "k8s=$k8s_version"
    cat "$module/go.mod" "$module/go.sum" "$module/cmd/pause/main.go" "$module/cmd/busy/main.go" "$here/build-nodes.sh"
}
extra_ready() { true; }

build_prepare nodes "$k8s_version" "$@"

version_flags=$(k8s_version_flags "$k8s_version")
goflags=(-trimpath -buildvcs=false)

step="kubelet, kube-controller-manager, kube-proxy"
echo "build-nodes.sh: $step (from ${SECONDS}s)" >&2
(cd "$module" && go build "${goflags[@]}" -ldflags "-s -w $version_flags" -o "$staging/" \
    k8s.io/kubernetes/cmd/kubelet \
    k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-proxy)
echo "build-nodes.sh: kubernetes binaries built at ${SECONDS}s" >&2

# Static: the pause image holds this one file and nothing else (no libc to link against).
step="pause"
echo "build-nodes.sh: $step (from ${SECONDS}s)" >&2
(cd "$module" && CGO_ENABLED=0 go build "${goflags[@]}" -ldflags "-s -w" -o "$staging/pause" ./cmd/pause)
# The real-node tests' CPU load, shipped as its own one-file image like pause.
step="busy"
echo "build-nodes.sh: $step (from ${SECONDS}s)" >&2
(cd "$module" && CGO_ENABLED=0 go build "${goflags[@]}" -ldflags "-s -w" -o "$staging/busy" ./cmd/busy)

build_install
