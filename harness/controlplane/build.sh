#!/usr/bin/env bash
# Build the e2e control plane (kube-apiserver, kube-scheduler, kubectl, etcd, kwok)
# from the Go module proxy into a cache outside the clone:
#
#   ${DRSCHED_CACHE:-$HOME/.cache/drsched}/controlplane/<k8s version>-<stamp>/bin/
#
# A stamp keyed by the pinned versions and the go.mod/go.sum (and source) hashes makes a second run a
# no-op, so the e2e fixture can call this on every session; the stamp and lock logic is lib.sh's.
# GOMODCACHE and GOCACHE stay at Go's defaults under $HOME, so CI runs on the
# same machine reuse the downloaded modules and compiled packages.
#
# Usage: build.sh               build if needed, then print the bin dir (last line of stdout)
#        build.sh --bin-dir     print the bin dir and exit (builds nothing, needs no Go)
#        build.sh --force       rebuild even when the stamp matches
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
binaries=(kube-apiserver kube-scheduler kubectl etcd kwok)
# KWOK v0.8.0 needs its stages passed in; generated from the pinned module (see kwok/cmd/).
stages_file=kwok-default-stages.yaml

. "$here/lib.sh"
name=build.sh

# Versions come from the committed go.mod files, so there is one place to bump them.
k8s_version=$(pinned "$here/go.mod" k8s.io/kubernetes)
etcd_version=$(pinned "$here/go.mod" go.etcd.io/etcd/server/v3)
kwok_version=$(pinned "$here/kwok/go.mod" sigs.k8s.io/kwok)
if [[ -z "$k8s_version" || -z "$etcd_version" || -z "$kwok_version" ]]; then
    echo "build.sh: cannot read pinned versions from $here/go.mod and kwok/go.mod" >&2
    exit 2
fi

stamp_inputs() {
    echo "k8s=$k8s_version etcd=$etcd_version kwok=$kwok_version"
    # build.sh itself is in the key: a change to its flags must rebuild.
    cat "$here/go.mod" "$here/go.sum" "$here/kwok/go.mod" "$here/kwok/go.sum" \
        "$here/cmd/etcd/main.go" "$here/kwok/cmd/kwok-default-stages/main.go" "$here/build.sh"
}
extra_ready() { [[ -s "$bin_dir/$stages_file" ]]; }

build_prepare controlplane "$k8s_version" "$@"

version_flags=$(k8s_version_flags "$k8s_version")
# -s -w: no symbol tables; these binaries are for tests, and it halves their size.
goflags=(-trimpath -buildvcs=false)

step="kube-apiserver, kube-scheduler, kubectl, etcd $etcd_version"
echo "build.sh: $step (from ${SECONDS}s)" >&2
(cd "$here" && go build "${goflags[@]}" -ldflags "-s -w $version_flags" -o "$staging/" \
    k8s.io/kubernetes/cmd/kube-apiserver \
    k8s.io/kubernetes/cmd/kube-scheduler \
    k8s.io/kubernetes/cmd/kubectl \
    ./cmd/etcd)
echo "build.sh: k8s + etcd built at ${SECONDS}s" >&2

step="kwok $kwok_version"
echo "build.sh: $step (from ${SECONDS}s)" >&2
(cd "$here/kwok" && go build "${goflags[@]}" -ldflags "-s -w" -o "$staging/" sigs.k8s.io/kwok/cmd/kwok)
step="kwok default stages"
echo "build.sh: $step (from ${SECONDS}s)" >&2
(cd "$here/kwok" && go run "${goflags[@]}" ./cmd/kwok-default-stages) >"$staging/$stages_file"

build_install
