#!/usr/bin/env bash
# Build the e2e control plane (kube-apiserver, kube-scheduler, kubectl, etcd, kwok)
# from the Go module proxy into a cache outside the clone:
#
#   ${DRSCHED_CACHE:-$HOME/.cache/drsched}/controlplane/<k8s version>/bin/
#
# A stamp file keyed by the pinned versions and the go.mod/go.sum (and source) hashes makes a
# second run a no-op, so the e2e fixture can call this on every session.
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

# Versions come from the committed go.mod files, so there is one place to bump them.
pinned() { grep -oE "^[[:space:]]*(require[[:space:]]+)?$2 (=> $2 )?v[^ ]+" "$1" | awk '{print $NF}' | head -n1; }
k8s_version=$(pinned "$here/go.mod" k8s.io/kubernetes)
etcd_version=$(pinned "$here/go.mod" go.etcd.io/etcd/server/v3)
kwok_version=$(pinned "$here/kwok/go.mod" sigs.k8s.io/kwok)
if [[ -z "$k8s_version" || -z "$etcd_version" || -z "$kwok_version" ]]; then
    echo "build.sh: cannot read pinned versions from $here/go.mod and kwok/go.mod" >&2
    exit 2
fi

cache_root=${DRSCHED_CACHE:-$HOME/.cache/drsched}
out_dir=$cache_root/controlplane/$k8s_version
bin_dir=$out_dir/bin
stamp_file=$out_dir/stamp

case "${1:-}" in
    --bin-dir) echo "$bin_dir"; exit 0 ;;
    --force) force=1 ;;
    "") force=0 ;;
    *) echo "usage: $0 [--bin-dir|--force]" >&2; exit 2 ;;
esac

stamp_key() {
    {
        echo "k8s=$k8s_version etcd=$etcd_version kwok=$kwok_version"
        # build.sh itself is in the key: a change to its flags must rebuild.
        cat "$here/go.mod" "$here/go.sum" "$here/kwok/go.mod" "$here/kwok/go.sum" \
            "$here/cmd/etcd/main.go" "$here/kwok/cmd/kwok-default-stages/main.go" "$here/build.sh"
    } | sha256sum | cut -d' ' -f1
}

up_to_date() {
    [[ -f "$stamp_file" && "$(cat "$stamp_file")" == "$(stamp_key)" ]] || return 1
    local b
    for b in "${binaries[@]}"; do [[ -x "$bin_dir/$b" ]] || return 1; done
    [[ -s "$bin_dir/$stages_file" ]]
}

if [[ $force == 0 ]] && up_to_date; then
    echo "build.sh: control plane $k8s_version already built" >&2
    echo "$bin_dir"
    exit 0
fi

command -v go >/dev/null || PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || { echo "build.sh: no 'go' on PATH (need Go >= 1.26)" >&2; exit 2; }

mkdir -p "$out_dir"
# Two pytest sessions (or CI and a developer) must not build into the same dir at once.
exec 9>"$out_dir/.lock"
flock 9
if [[ $force == 0 ]] && up_to_date; then  # another process finished the build while we waited
    echo "$bin_dir"
    exit 0
fi

staging=$(mktemp -d "$out_dir/.build.XXXXXX")
trap 'rm -rf "$staging"' EXIT
step="(setup)"
trap 'echo "build.sh: FAILED at step $step after ${SECONDS}s (output above)" >&2' ERR

# Without these, /version reports v0.0.0-master+$Format:%H$ and kubectl warns about skew.
minor=${k8s_version#v1.}; minor=${minor%%.*}
version_flags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    version_flags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    version_flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
done
# -s -w: no symbol tables; these binaries are for tests, and it halves their size.
goflags=(-trimpath -buildvcs=false)

echo "build.sh: building k8s $k8s_version, etcd $etcd_version, kwok $kwok_version into $bin_dir" >&2
echo "build.sh: go $(go env GOVERSION), GOMODCACHE=$(go env GOMODCACHE), GOCACHE=$(go env GOCACHE)" >&2
SECONDS=0

step="kube-apiserver, kube-scheduler, kubectl, etcd"
echo "build.sh: $step (from ${SECONDS}s)" >&2
(cd "$here" && go build "${goflags[@]}" -ldflags "-s -w $version_flags" -o "$staging/" \
    k8s.io/kubernetes/cmd/kube-apiserver \
    k8s.io/kubernetes/cmd/kube-scheduler \
    k8s.io/kubernetes/cmd/kubectl \
    ./cmd/etcd)
echo "build.sh: k8s + etcd built at ${SECONDS}s" >&2

step="kwok"
echo "build.sh: $step (from ${SECONDS}s)" >&2
(cd "$here/kwok" && go build "${goflags[@]}" -ldflags "-s -w" -o "$staging/" sigs.k8s.io/kwok/cmd/kwok)
step="kwok default stages"
echo "build.sh: $step (from ${SECONDS}s)" >&2
(cd "$here/kwok" && go run "${goflags[@]}" ./cmd/kwok-default-stages) >"$staging/$stages_file"

step="install"
echo "build.sh: $step (from ${SECONDS}s)" >&2
rm -rf "$bin_dir"
mv "$staging" "$bin_dir"
chmod 755 "$bin_dir"
stamp_key >"$stamp_file"
trap - ERR

echo "build.sh: built in ${SECONDS}s" >&2
(cd "$bin_dir" && ls -l "${binaries[@]}" | awk '{printf "build.sh:   %-16s %6.1f MB\n", $NF, $5/1048576}') >&2
echo "$bin_dir"
