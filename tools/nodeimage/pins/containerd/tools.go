//go:build tools

// Package containerd pins the container runtime of the kind node image: containerd v2
// (kubelet v1.37 reads its cgroup driver through the CRI RuntimeConfig call, which
// containerd 1.x lacks), its runc shim and ctr. tools/nodeimage builds these commands
// into the versioned cache.
package containerd

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
)
