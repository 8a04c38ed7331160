//go:build tools

// Package k8s pins the Kubernetes binaries that Flotilla's tests, local fleet and kind
// node image run. Nothing here is compiled into Flotilla; `make tools` builds the
// control plane and `make node-image` the node's commands into a versioned cache
// outside the repository.
package k8s

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubeadm"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
