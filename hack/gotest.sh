#!/usr/bin/env bash
# Runs a `go test` command line, keeping its whole output in
# bin/test-logs/NAME.log, and on failure ends with the failed tests alone
# (their names, the test's own lines and panics; the controllers' JSON log
# lines left out), so that the end of a long CI log says what failed.
#
#   hack/gotest.sh NAME go test ARGS...
set -uo pipefail
name=$1
shift
logs="$(cd "$(dirname "$0")/.." && pwd)/bin/test-logs"
mkdir -p "$logs"
log=$logs/$name.log
"$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
  echo
  echo "==> $name failed (exit $rc); what failed, from $log:"
  grep -v '^{"level"' "$log" |
    grep -E -- '^[[:space:]]*--- FAIL|^FAIL|^panic:|^[[:space:]]+[^[:space:]]+\.go:[0-9]+:|^[[:space:]]+Error|timed out' |
    tail -n 150
fi
exit "$rc"
