// Package charts renders the Helm charts in charts/ with the pinned helm
// (tools/k8s/helm) and checks them against manifests/: with default values
// charts/flotilla-hub renders what `kubectl apply -k manifests/hub` applies and
// charts/flotilla-agent what `agent join --install` applies, less the
// differences Helm brings (Diff says which). `make verify` runs the check
// (hack/verify-charts.sh, command drift) and `make manifests` writes the
// charts' values tables into docs/operations/helm.md (command valuesdoc).
package charts
