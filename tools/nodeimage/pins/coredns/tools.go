//go:build tools

// Package coredns pins the cluster DNS server of the kind node image, at the version
// the pinned kubeadm deploys (`kubeadm config images list`; tools/nodeimage checks
// that they agree). tools/nodeimage builds it and packs it as the CoreDNS image.
package coredns

import (
	_ "github.com/coredns/coredns"
)
