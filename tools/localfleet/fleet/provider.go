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
