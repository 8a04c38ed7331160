#!/usr/bin/env bash
# The fleet suites of `make test`, in order: e2e on kwok, the version skew and
# upgrade suite, the kind smoke suite. The kind node image the last one needs is
# built beside the kwok e2e suite, which mostly waits on its fleet, so a fresh
# machine does not pay for the two one after the other (about 15 min of
# building); where the image is cached, `make node-image` returns at once.
set -euo pipefail
cd "$(dirname "$0")/.."
make=${MAKE:-make}
log=$(mktemp "${TMPDIR:-/tmp}/flotilla-node-image.XXXXXX")
trap 'rm -f "$log"' EXIT

echo "==> building the kind node image in the background (log: $log)"
"$make" --no-print-directory node-image >"$log" 2>&1 &
image=$!

e2e=0
"$make" --no-print-directory e2e || e2e=$?
if ! wait "$image"; then
  cat "$log"
  echo "make node-image failed (above)"
  exit 1
fi
echo "==> the kind node image (built beside e2e):"
tail -n 5 "$log"
if [ "$e2e" -ne 0 ]; then
  exit "$e2e"
fi
"$make" --no-print-directory e2e-skew
"$make" --no-print-directory e2e-kind-smoke
