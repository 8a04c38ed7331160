/*
Copyright 2026 The Flotilla Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package fleet

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"k8s.io/client-go/tools/clientcmd"
)

// clusterInventoryModule provides the ClusterProfile CRD: the hub publishes
// a profile per member when its cluster has it (hub/clusterprofile), and
// installs none itself.
const clusterInventoryModule = "sigs.k8s.io/cluster-inventory-api"

// installClusterProfileCRD applies the ClusterProfile CRD of the
// cluster-inventory-api module this checkout builds with, as a hub cluster's
// administrator would, and waits until it is served.
func (f *Fleet) installClusterProfileCRD(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", clusterInventoryModule)
	cmd.Dir = f.opts.RepoRoot
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("failed to find module %s: %w", clusterInventoryModule, err)
	}
	crd := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "bases", "multicluster.x-k8s.io_clusterprofiles.yaml")
	if _, err := kubectl(ctx, f.HubKubeconfig(), "apply", "--server-side", "-f", crd); err != nil {
		return err
	}
	_, err = kubectl(ctx, f.HubKubeconfig(), "wait", "--for", "condition=Established", "--timeout", "60s", "crd/clusterprofiles.multicluster.x-k8s.io")
	return err
}

var profileFlagSupport sync.Map // hub binary path -> bool

// clusterProfileArgs are the hub flags that make its ClusterProfiles name
// the hub cluster's API server as this machine reaches it (a hub of an
// older version, which the skew suite runs, has no such flag).
func (f *Fleet) clusterProfileArgs(ctx context.Context) ([]string, error) {
	supported, ok := profileFlagSupport.Load(f.hubBinary)
	if !ok {
		help, _ := run(ctx, nil, f.hubBinary, "--help")
		supported = strings.Contains(help, "--cluster-profile-server")
		profileFlagSupport.Store(f.hubBinary, supported)
	}
	if !supported.(bool) {
		return nil, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", f.HubKubeconfig())
	if err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", f.HubKubeconfig(), err)
	}
	return []string{"--cluster-profile-server", cfg.Host}, nil
}
