/*
Copyright 2026 The Flotilla Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package charts renders the Helm charts in charts/ with the pinned helm
// (tools/k8s/helm) and checks them against manifests/: with default values
// charts/flotilla-hub renders what `kubectl apply -k manifests/hub` applies (and the
// APIServices of manifests/hub/proxy) and
// charts/flotilla-agent what `agent join --install` applies, less the
// differences Helm brings (Diff says which). `make verify` runs the check
// (hack/verify-charts.sh, command drift) and `make manifests` writes the
// charts' values tables into docs/operations/helm.md (command valuesdoc).
package charts
