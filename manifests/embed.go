// Package manifests embeds the kustomize bases that programs apply themselves:
// manifests/agent, which `agent join --install` applies to a member cluster.
package manifests

import "embed"

// Agent holds manifests/agent: kustomization.yaml and the files it lists.
//
//go:embed agent/*.yaml
var Agent embed.FS
