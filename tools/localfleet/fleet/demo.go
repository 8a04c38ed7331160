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
	"path/filepath"
	"strings"
	"time"
)

// perClusterColumns prints one line per cluster with its conditions.
const perClusterJSONPath = `{range .status.placementStatuses[*]}{.clusterName}{":"}{range .conditions[*]}{" "}{.type}={.status}{end}{"\n"}{end}`

// Demo brings the fleet up if needed, places manifests/samples on every member
// and prints the tables a user reads once the placement is Available.
func (f *Fleet) Demo(ctx context.Context) error {
	st, err := f.loadState()
	if err != nil {
		return err
	}
	if len(st.Clusters) == 0 {
		if err := f.Up(ctx); err != nil {
			return err
		}
		if st, err = f.loadState(); err != nil {
			return err
		}
	}
	hub := f.HubKubeconfig()
	samples := filepath.Join(f.opts.RepoRoot, "manifests", "samples")
	if st.Provider == ProviderKind {
		if samples, err = f.kindSamples(); err != nil {
			return err
		}
	}
	done := f.stepf("placing manifests/samples (namespace demo with a ConfigMap and a Deployment) on every member")
	if _, err := kubectl(ctx, hub, "apply", "-k", samples); err != nil {
		return done(err)
	}
	if err := done(nil); err != nil {
		return err
	}
	done = f.stepf("waiting for placement demo to be Available on every member")
	err = waitFor(ctx, 3*time.Minute, func() error {
		out, err := kubectl(ctx, hub, "get", "crp", "demo", "-o",
			`jsonpath={.status.conditions[?(@.type=="ClusterResourcePlacementAvailable")].status}`)
		if err != nil {
			return err
		}
		if strings.TrimSpace(out) != "True" {
			return fmt.Errorf("ClusterResourcePlacementAvailable=%q", out)
		}
		return nil
	})
	if err := done(err); err != nil {
		return err
	}
	if st.Provider == ProviderKind {
		if err := f.kindDemoPods(ctx, st); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		title string
		args  []string
	}{
		{"kubectl get mc", []string{"get", "mc"}},
		{"kubectl get crp -o wide", []string{"get", "crp", "-o", "wide"}},
		{"per-cluster conditions of crp demo", []string{"get", "crp", "demo", "-o", "jsonpath=" + perClusterJSONPath}},
	} {
		out, err := kubectl(ctx, hub, c.args...)
		if err != nil {
			return err
		}
		fmt.Fprintf(f.opts.Out, "\n$ %s\n%s", c.title, out)
	}
	fmt.Fprintf(f.opts.Out, "\nhub kubeconfig: %s (try: kubectl --kubeconfig %s describe crp demo)\n", hub, hub)
	return nil
}
