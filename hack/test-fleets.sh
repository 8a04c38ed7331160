#!/usr/bin/env bash
# The fleet suites of `make test`, in order: e2e on kwok, the version skew and
# upgrade suite, the kind smoke suite. What the later suites need is built
# beside the kwok e2e suite, which mostly waits on its fleet, so a fresh
# machine does not pay for it one step after the other: the kind node image
# (about 15 min of building) and then the skew suite's N-1 base (4–7 min).
# Where they are cached, both return at once.
set -euo pipefail
cd "$(dirname "$0")/.."
make=${MAKE:-make}
image_log=$(mktemp "${TMPDIR:-/tmp}/flotilla-node-image.XXXXXX")
base_log=$(mktemp "${TMPDIR:-/tmp}/flotilla-skew-base.XXXXXX")
trap 'rm -f "$image_log" "$base_log"' EXIT

echo "==> building the kind node image, then the skew base, in the background"
(
  "$make" --no-print-directory node-image >"$image_log" 2>&1 || exit 1
  # A failure here is not fatal: make e2e-skew builds the base again and
  # reports its error.
  "$make" --no-print-directory skew-base >"$base_log" 2>&1 || echo "make skew-base failed; make e2e-skew will retry" >>"$base_log"
) &
background=$!

e2e=0
"$make" --no-print-directory e2e || e2e=$?
if ! wait "$background"; then
  cat "$image_log"
  echo "make node-image failed (above)"
  exit 1
fi
echo "==> the kind node image (built beside e2e):"
tail -n 5 "$image_log"
echo "==> the skew base (built beside e2e):"
tail -n 3 "$base_log"
if [ "$e2e" -ne 0 ]; then
  exit "$e2e"
fi
"$make" --no-print-directory e2e-skew
"$make" --no-print-directory e2e-kind-smoke
