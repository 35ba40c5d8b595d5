# What build.sh, build-nodes.sh and build-registry.sh share; each sources this file (it runs nothing itself).
#
# A build script sets `name` (its file name, for messages) and `binaries` (the files it installs), defines
# `stamp_inputs` (prints everything its build depends on: pinned versions, go.mod/go.sum, sources, the
# script itself; this file is added here) and `extra_ready` (further checks of an installed build; `true`
# when none), then:
#
#   build_prepare <cache subdir> <version> "$@"    # its own arguments: none, --bin-dir or --force
#   ... go build into "$staging", setting `step` before each part ...
#   build_install
#
# build_prepare handles --bin-dir (print the bin dir, build nothing, need no Go), prints the bin dir and
# exits 0 when the build is up to date, finds go, takes the build's lock (one build at a time: two pytest
# sessions, or CI and a developer) and checks again after waiting for it, then makes "$staging" (removed on
# exit) and a trap that names the failed step. build_install moves the staging dir into place, writes the
# stamp and prints the bin dir as the last line of stdout.
#
# The cache dir is keyed by the version and the stamp:
#
#   ${DRSCHED_CACHE:-$HOME/.cache/drsched}/<subdir>/<version>-<first 12 hex digits of the stamp>/bin/
#
# so checkouts whose scripts or go.mod differ (git worktrees, an older clone, a branch that changes a flag)
# each keep their own build beside the others' instead of rebuilding over them in turn; a change to any
# stamp input builds into a new dir (Go's build cache, under $HOME, makes that much faster than a cold one).

pinned() {  # pinned <go.mod> <module>: the version go.mod requires (or replaces it with)
    grep -oE "^[[:space:]]*(require[[:space:]]+)?$2 (=> $2 )?v[^ ]+" "$1" | awk '{print $NF}' | head -n1
}

_lib_file=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh

stamp_key() {
    { stamp_inputs; cat "$_lib_file"; } | sha256sum | cut -d' ' -f1
}

up_to_date() {
    [[ -f "$stamp_file" && "$(cat "$stamp_file")" == "$stamp" ]] || return 1
    local b
    for b in "${binaries[@]}"; do [[ -x "$bin_dir/$b" ]] || return 1; done
    extra_ready
}

build_prepare() {
    local subdir=$1 version=$2
    shift 2
    stamp=$(stamp_key)
    out_dir=${DRSCHED_CACHE:-$HOME/.cache/drsched}/$subdir/$version-${stamp:0:12}
    bin_dir=$out_dir/bin
    stamp_file=$out_dir/stamp
    log_file=$out_dir/build.log
    case "${1:-}" in
        --bin-dir) echo "$bin_dir"; exit 0 ;;
        --force) force=1 ;;
        "") force=0 ;;
        *) echo "usage: $name [--bin-dir|--force]" >&2; exit 2 ;;
    esac
    if [[ $force == 0 ]] && up_to_date; then
        echo "$name: $version already built in $bin_dir" >&2
        echo "$bin_dir"
        exit 0
    fi
    command -v go >/dev/null || PATH=$PATH:/usr/local/go/bin
    command -v go >/dev/null || { echo "$name: no 'go' on PATH (need Go >= 1.26)" >&2; exit 2; }
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
    trap 'echo "$name: FAILED at step $step after ${SECONDS}s (output above)" >&2' ERR
    echo "$name: building $version into $bin_dir" >&2
    echo "$name: go $(go env GOVERSION), GOMODCACHE=$(go env GOMODCACHE), GOCACHE=$(go env GOCACHE)" >&2
    SECONDS=0
}

k8s_version_flags() {  # -ldflags -X values so /version reports $1, not v0.0.0-master+$Format:%H$
    local minor=${1#v1.} pkg flags=""
    minor=${minor%%.*}
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        flags+=" -X $pkg.gitVersion=$1 -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
        flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    done
    echo "$flags"
}

build_install() {
    step="install"
    echo "$name: $step (from ${SECONDS}s)" >&2
    rm -rf "$bin_dir"
    mv "$staging" "$bin_dir"
    chmod 755 "$bin_dir"
    echo "$stamp" >"$stamp_file"
    trap - ERR
    echo "$name: built in ${SECONDS}s" >&2
    (cd "$bin_dir" && ls -l "${binaries[@]}" | awk -v n="$name" '{printf "%s:   %-24s %6.1f MB\n", n, $NF, $5/1048576}') >&2
    echo "$bin_dir"
}
