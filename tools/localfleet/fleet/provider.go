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

package fleet

import "fmt"

// Providers of the fleet's clusters.
const (
	// ProviderKwok runs every cluster as kwok processes with fake nodes; the hub
	// and agents run as local processes. The default: quick, and runs anywhere.
	ProviderKwok = "kwok"
	// ProviderKind runs every cluster as a kind node in podman, from the node
	// image tools/nodeimage builds; the hub and agents run as pods from the
	// images `make images` builds, installed from manifests/hub and by
	// `agent join --install`.
	ProviderKind = "kind"
)

func validProvider(p string) error {
	switch p {
	case ProviderKwok, ProviderKind:
		return nil
	}
	return fmt.Errorf("--provider %q: want %s or %s", p, ProviderKwok, ProviderKind)
}
