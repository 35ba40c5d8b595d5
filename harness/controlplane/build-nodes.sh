#!/usr/bin/env bash
# Build the real-node binaries (kubelet, kube-controller-manager, kube-proxy, our static pause program
# for the pod sandbox image and `busy`, the tests' CPU load) from the same Go module as build.sh, into
# their own cache dir (the module is nodes/, with the same replace block as build.sh's go.mod):
#
#   ${DRSCHED_CACHE:-$HOME/.cache/drsched}/nodes/<k8s version>/bin/
#
# Separate from build.sh on purpose: its own stamp and lock, so building node binaries never
# invalidates (or waits on) the control-plane build that the KWOK tests use.
#
# Usage: build-nodes.sh            build if needed, then print the bin dir (last line of stdout)
#        build-nodes.sh --bin-dir  print the bin dir and exit (builds nothing, needs no Go)
#        build-nodes.sh --force    rebuild even when the stamp matches
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
module=$here/nodes
binaries=(kubelet kube-controller-manager kube-proxy pause busy)

pinned() { grep -oE "^[[:space:]]*(require[[:space:]]+)?$2 (=> $2 )?v[^ ]+" "$1" | awk '{print $NF}' | head -n1; }
k8s_version=$(pinned "$module/go.mod" k8s.io/kubernetes)
if [[ -z "$k8s_version" ]]; then
    echo "build-nodes.sh: cannot read the pinned k8s.io/kubernetes version from $module/go.mod" >&2
    exit 2
fi

cache_root=${DRSCHED_CACHE:-$HOME/.cache/drsched}
out_dir=$cache_root/nodes/$k8s_version
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
        echo "k8s=$k8s_version"
        cat "$module/go.mod" "$module/go.sum" "$module/cmd/pause/main.go" "$module/cmd/busy/main.go" "$here/build-nodes.sh"
    } | sha256sum | cut -d' ' -f1
}

up_to_date() {
    [[ -f "$stamp_file" && "$(cat "$stamp_file")" == "$(stamp_key)" ]] || return 1
    local b
    for b in "${binaries[@]}"; do [[ -x "$bin_dir/$b" ]] || return 1; done
}

if [[ $force == 0 ]] && up_to_date; then
    echo "build-nodes.sh: node binaries $k8s_version already built" >&2
    echo "$bin_dir"
    exit 0
fi

command -v go >/dev/null || PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || { echo "build-nodes.sh: no 'go' on PATH (need Go >= 1.26)" >&2; exit 2; }

mkdir -p "$out_dir"
exec 9>"$out_dir/.lock"
flock 9
if [[ $force == 0 ]] && up_to_date; then  # another process finished the build while we waited
    echo "$bin_dir"
    exit 0
fi

staging=$(mktemp -d "$out_dir/.build.XXXXXX")
trap 'rm -rf "$staging"' EXIT
step="(setup)"
trap 'echo "build-nodes.sh: FAILED at step $step after ${SECONDS}s (output above)" >&2' ERR

minor=${k8s_version#v1.}; minor=${minor%%.*}
version_flags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    version_flags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    version_flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
done
goflags=(-trimpath -buildvcs=false)

echo "build-nodes.sh: building kubelet, kube-controller-manager, kube-proxy $k8s_version into $bin_dir" >&2
SECONDS=0

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

step="install"
echo "build-nodes.sh: $step (from ${SECONDS}s)" >&2
rm -rf "$bin_dir"
mv "$staging" "$bin_dir"
chmod 755 "$bin_dir"
stamp_key >"$stamp_file"
trap - ERR

echo "build-nodes.sh: built in ${SECONDS}s" >&2
(cd "$bin_dir" && ls -l "${binaries[@]}" | awk '{printf "build-nodes.sh:   %-24s %6.1f MB\n", $NF, $5/1048576}') >&2
echo "$bin_dir"
