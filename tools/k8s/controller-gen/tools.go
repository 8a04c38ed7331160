//go:build tools

// Package controllergen pins controller-gen, which generates Flotilla's deepcopy
// functions and CRDs (`make generate manifests`).
package controllergen

import (
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
)
