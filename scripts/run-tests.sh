#!/usr/bin/env bash
# Runs lint, then the unit suite, the control-plane build, the integration and e2e suites in that order,
# timing each; used by `make test`.
# A suite with no tests yet (pytest exit 5) is reported, not failed. The summary ends with every skipped
# test and its reason (read from each suite's JUnit XML), so no skip goes unnoticed.
set -uo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-$HOME/.cache/drsched/venv}
PY="$VENV/bin/python"
status=0
summary=()
reports=$(mktemp -d)
trap 'rm -rf "$reports"' EXIT

run_suite() {
  local name=$1; shift
  local start=$SECONDS rc
  echo "=== $name: $*"
  "$@"; rc=$?
  if [ "$rc" -eq 5 ]; then echo "--- $name: no tests collected"; rc=0; fi
  summary+=("$name: rc=$rc, $((SECONDS - start)) s")
  [ "$rc" -eq 0 ] || status=1
}

run_suite lint bash -c "$VENV/bin/ruff check . && $VENV/bin/lint-imports"
run_suite unit "$PY" -m pytest tests/unit -q --junitxml="$reports/unit.xml"
# The control plane is built before the integration suite: one of its tests (alert rules) reads the Kubernetes
# module the build downloads, and would be skipped on a fresh machine's first run if the build came after it.
built=0
if [ -x harness/controlplane/build.sh ]; then
  run_suite controlplane-build bash harness/controlplane/build.sh
  built=1
fi
run_suite integration "$PY" -m pytest tests/integration -q --junitxml="$reports/integration.xml"
if [ "$built" -eq 1 ]; then
  # the e2e-marked tests and the harness's own fast ones
  run_suite e2e "$PY" -m pytest tests/e2e -q --junitxml="$reports/e2e.xml"
fi
echo "=== summary"
printf '  %s\n' "${summary[@]}"
"$PY" scripts/list-skips.py "$reports"/*.xml
exit $status
