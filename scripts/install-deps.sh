#!/usr/bin/env bash
# Installs the Debian packages the tests use, so that `make test` skips nothing on a fresh machine; both
# `make test` (through `make deps`) and `.ci/run` call it. As root (or with password-less sudo) it installs
# what is missing; otherwise it names the missing packages and the command to install them, and exits 0 so
# that the suite still runs (the tests that need them are skipped and listed in the summary).
#   openssl                        control-plane and extender TLS certificates
#   iproute2, util-linux           the monitor's per-pod network test runs a pod in its own netns (ip, unshare)
#   prometheus, prometheus-node-exporter   the prometheus usage provider is tested against the real ones
#   buildah, mmdebstrap            the images: a Debian base from the package registry, built without a registry
#   containerd, runc               real kubelet nodes (and image archives checked in a throwaway containerd)
#   containernetworking-plugins, iptables   real nodes' pod networks and kube-proxy's Services
set -euo pipefail
PACKAGES=(openssl iproute2 util-linux prometheus prometheus-node-exporter buildah mmdebstrap containerd runc
          containernetworking-plugins iptables)

if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
if ! command -v dpkg >/dev/null 2>&1; then
  echo "install-deps: not a Debian-based system; install these (or their equivalents) yourself: ${PACKAGES[*]}" >&2
  exit 0
fi

need=()
for pkg in "${PACKAGES[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -eq 0 ]; then
  echo "install-deps: Debian packages present: ${PACKAGES[*]}"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  cat >&2 <<EOF
install-deps: missing Debian packages: ${need[*]}
  The tests that need them will be SKIPPED (listed at the end). To run everything, install them as root:
    sudo apt-get install -y --no-install-recommends ${need[*]}
  (or: sudo bash scripts/install-deps.sh), then run make test again.
EOF
  exit 0
fi

echo "install-deps: installing Debian packages: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
