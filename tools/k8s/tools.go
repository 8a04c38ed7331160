//go:build tools

// Package k8s pins the Kubernetes control-plane binaries that Flotilla's tests and
// local fleet run. Nothing here is compiled into Flotilla; `make tools` builds these
// commands into a versioned cache outside the repository.
package k8s

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
