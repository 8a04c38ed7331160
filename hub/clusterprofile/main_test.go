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

package clusterprofile

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/flotilla-io/flotilla/pkg/testenv"
)

var env *testenv.Env

// TestMain starts a hub API server with Flotilla's CRDs and the
// ClusterProfile CRD of the cluster-inventory-api module this build uses
// (the hub installs none itself: a hub cluster gets it from that project).
func TestMain(m *testing.M) {
	scheme := testenv.NewScheme()
	utilruntime.Must(cpv1alpha1.AddToScheme(scheme))
	os.Exit(testenv.Run(m, testenv.Options{Scheme: scheme}, func(e *testenv.Env) error {
		env = e
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/cluster-inventory-api").Output()
		if err != nil {
			return fmt.Errorf("failed to find the cluster-inventory-api module: %w", err)
		}
		dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "bases")
		_, err = envtest.InstallCRDs(e.Config, envtest.CRDInstallOptions{Paths: []string{filepath.Join(dir, "multicluster.x-k8s.io_clusterprofiles.yaml")}, ErrorIfPathMissing: true})
		return err
	}))
}
