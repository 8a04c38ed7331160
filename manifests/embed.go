// Package manifests embeds the kustomize bases that programs apply themselves:
// manifests/agent, which `agent join --install` applies to a member cluster.
package manifests

import "embed"

// Agent holds manifests/agent: its kustomization.yaml, the base it builds on,
// every RBAC profile (least-privilege/), and what kustomize builds of each
// profile (rendered/, written by `make manifests`), which install applies.
//
//go:embed agent
var Agent embed.FS
