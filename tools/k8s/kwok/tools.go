//go:build tools

// Package kwok pins kwok and kwokctl, which run the fake-node kwok clusters of the
// local fleet and the end-to-end tests. Kept apart from ../go.mod because kwok is
// built against its own Kubernetes client libraries.
package kwok

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
	_ "sigs.k8s.io/kwok/cmd/kwokctl"
)
