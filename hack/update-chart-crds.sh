#!/usr/bin/env bash
# Copies the CRDs of manifests/crds into charts/flotilla-hub/crds, which Helm installs
# before the chart's templates (Helm reads no file outside the chart, so a symlink
# would not do). `make manifests` runs it; make verify fails when the copy is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
dst=charts/flotilla-hub/crds
mkdir -p "$dst"
find "$dst" -maxdepth 1 -name '*.yaml' -delete
for f in manifests/crds/*.yaml; do
  [ "$(basename "$f")" = kustomization.yaml ] && continue
  cp "$f" "$dst/"
done
