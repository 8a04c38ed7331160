#!/usr/bin/env bash
# Fails when the generated reference pages (docs/reference/cli, docs/reference/api,
# docs/reference/metrics.md) or the ownership tables generated into
# docs/concepts/pipeline.md (from hub/pipeline/ownership.go) differ from what
# `make docs` produces, or when a relative link or #anchor in README.md, the
# root's *.md or docs/ does not resolve. Like
# verify-generated.sh it regenerates in place, so after a failure the tree holds the
# fresh pages, ready to commit.
set -euo pipefail
go=${GO:-go}
cd "$(dirname "$0")/.."
snapshot() {
  { find docs/reference/cli docs/reference/api -type f 2>/dev/null; ls docs/reference/metrics.md docs/concepts/pipeline.md 2>/dev/null; } | sort | xargs -r sha256sum
}
before=$(snapshot)
$go run ./tools/docgen gen
after=$(snapshot)
if [ "$before" != "$after" ]; then
  echo "the generated reference was stale; 'make docs' updated it:" >&2
  diff <(echo "$before") <(echo "$after") | grep '^[<>]' | awk '{print "  " $3}' | sort -u >&2
  exit 1
fi
echo "generated reference is up to date"
$go run ./tools/docgen links
