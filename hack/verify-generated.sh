#!/usr/bin/env bash
# Fails when the committed generated files (deepcopy, CRDs and their copy in
# charts/flotilla-hub/crds, manifests/agent/rendered, the charts' values tables in
# docs/operations/helm.md) differ from what `make generate manifests` produces. It
# regenerates in place, so after a failure the tree holds the fresh files, ready to
# commit.
set -euo pipefail
make=${1:-make}
cd "$(dirname "$0")/.."
snapshot() {
  { find apis -name 'zz_generated*.go'; find manifests/crds manifests/agent/rendered charts/flotilla-hub/crds -type f; echo docs/operations/helm.md; } | sort | xargs -r sha256sum
}
before=$(snapshot)
$make --no-print-directory generate manifests >/dev/null
after=$(snapshot)
if [ "$before" != "$after" ]; then
  echo "generated files were stale; 'make generate manifests' updated them:" >&2
  diff <(echo "$before") <(echo "$after") | grep '^[<>]' | awk '{print "  " $3}' | sort -u >&2
  exit 1
fi
echo "generated files are up to date"
