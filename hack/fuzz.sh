#!/usr/bin/env bash
# Runs each fuzz target (package:Target) for FUZZ_TIME. A target fails on a real
# finding: a failing input written to testdata/fuzz, a panic or a test error.
# Go before 1.27 may also report a bare "context deadline exceeded" when
# -fuzztime ends while a worker is mid-run (golang/go#75804), with nothing
# written; that is not a finding, and the target is then run once more.
set -euo pipefail
go=${GO:-go}
time=${FUZZ_TIME:-10s}
for t in "$@"; do
	pkg=${t%%:*}
	name=${t##*:}
	for attempt in 1 2; do
		echo "fuzzing $name in $pkg for $time"
		log=$(mktemp)
		status=0
		"$go" test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$time" -fuzzminimizetime 1x >"$log" 2>&1 || status=$?
		grep -v '^fuzz: elapsed' "$log" || true
		if [ "$status" = 0 ]; then
			rm -f "$log"
			break
		fi
		if grep -q 'context deadline exceeded' "$log" && ! grep -qE 'Failing input written|panic:|_test\.go:[0-9]+:' "$log" && [ "$attempt" = 1 ]; then
			echo "$name: the fuzzing engine's deadline race (golang/go#75804), nothing found; running it again"
			rm -f "$log"
			continue
		fi
		rm -f "$log"
		exit 1
	done
done
