#!/usr/bin/env bash
# Lints and renders the charts in charts/ with the pinned helm ($HELM; make verify
# builds it), with their default values and with the non-trivial values file each
# keeps in ci/, and checks that with the defaults they render what manifests/
# applies (tools/charts/drift).
set -euo pipefail
cd "$(dirname "$0")/.."
helm=${HELM:?HELM must name the helm binary (make verify sets it)}
go=${GO:-go}
ns=flotilla-system
for chart in charts/flotilla-hub charts/flotilla-agent; do
  "$helm" lint --strict --namespace "$ns" "$chart" >/dev/null
  "$helm" template "$(basename "$chart")" "$chart" --namespace "$ns" --include-crds >/dev/null
  for values in "$chart"/ci/*-values.yaml; do
    "$helm" lint --strict --namespace "$ns" "$chart" --values "$values" >/dev/null
    "$helm" template "$(basename "$chart")" "$chart" --namespace "$ns" --include-crds --values "$values" >/dev/null
  done
  echo "$chart: lints and renders (defaults and $(ls "$chart"/ci/*-values.yaml | xargs -n1 basename | tr '\n' ' '| sed 's/ $//'))"
done
"$go" run ./tools/charts/drift --helm "$helm"
