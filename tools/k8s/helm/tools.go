//go:build tools

// Package helm pins Helm, which `make verify` runs to lint and render the charts
// in charts/ and the kind smoke suite installs the hub with.
package helm

import (
	_ "helm.sh/helm/v4/cmd/helm"
)
