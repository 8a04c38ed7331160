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
	"os"
	"path/filepath"
	"strings"
	"time"
)

// nodeShape is the fake nodes a cluster gets.
type nodeShape struct {
	count  int
	cpu    string
	memory string
}

// memberShape gives members different sizes, so that property selectors and
// sorters (node count, available CPU) have something to tell apart.
func memberShape(i int) nodeShape {
	return nodeShape{count: 2 + i%2, cpu: fmt.Sprint(4 * i), memory: fmt.Sprintf("%dGi", 16*i)}
}

func (f *Fleet) kwokEnv() []string {
	return []string{
		// Everything kwokctl writes stays inside the fleet's folder.
		"KWOK_WORKDIR=" + filepath.Join(f.opts.Dir, "kwok"),
		// Never touch the user's kubeconfig.
		"KUBECONFIG=" + filepath.Join(f.opts.Dir, "kwok", "kubeconfig"),
	}
}

func (f *Fleet) kwokctl(ctx context.Context, args ...string) error {
	_, err := run(ctx, f.kwokEnv(), filepath.Join(f.tools.Kwok, "kwokctl"), args...)
	return err
}

// kwokClusters lists the fleet's kwok clusters that exist on disk.
func (f *Fleet) kwokClusters(_ context.Context) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(f.opts.Dir, "kwok", "clusters"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to list kwok clusters: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), clusterPrefix) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// createCluster creates one kwok cluster from the pinned binaries with RBAC on,
// adds its fake nodes and writes its admin kubeconfig. extra are more
// kwokctl create cluster flags.
func (f *Fleet) createCluster(ctx context.Context, st *State, name, kubeconfig string, nodes nodeShape, extra ...string) error {
	st.Clusters = append(st.Clusters, name)
	if err := f.saveState(st); err != nil {
		return err
	}
	k := f.tools.Kube
	args := []string{"create", "cluster", "--name", name,
		"--runtime", "binary",
		"--kube-authorization",
		"--kube-apiserver-binary", filepath.Join(k, "kube-apiserver"),
		"--kube-controller-manager-binary", filepath.Join(k, "kube-controller-manager"),
		"--kube-scheduler-binary", filepath.Join(k, "kube-scheduler"),
		"--etcd-binary", filepath.Join(k, "etcd"),
		"--kwok-controller-binary", filepath.Join(f.tools.Kwok, "kwok"),
		"--wait", "2m",
		"--kubeconfig", kubeconfig,
		// One of each: a lease only adds a way to exit (a renewal missed
		// while the machine is loaded ends the process, and nothing
		// restarts it).
		"--extra-args", "kube-controller-manager=leader-elect=false",
		"--extra-args", "kube-scheduler=leader-elect=false",
	}
	if err := f.kwokctl(ctx, append(args, extra...)...); err != nil {
		return err
	}
	params := fmt.Sprintf(`.allocatable.cpu=%q | .capacity.cpu=%q | .allocatable.memory=%q | .capacity.memory=%q | .allocatable.pods="110" | .capacity.pods="110"`,
		nodes.cpu, nodes.cpu, nodes.memory, nodes.memory)
	if err := f.kwokctl(ctx, "scale", "node", "--name", name, "--replicas", fmt.Sprint(nodes.count), "--param", params); err != nil {
		return fmt.Errorf("failed to add nodes: %w", err)
	}
	return waitFor(ctx, 2*time.Minute, func() error {
		out, err := kubectl(ctx, kubeconfig, "get", "nodes", "--no-headers")
		if err != nil {
			return err
		}
		if n := len(strings.Fields(strings.TrimSpace(out))); n == 0 || strings.Count(out, " Ready ") < nodes.count {
			return fmt.Errorf("waiting for %d Ready nodes, have:\n%s", nodes.count, out)
		}
		return nil
	})
}

func kubectl(ctx context.Context, kubeconfig string, args ...string) (string, error) {
	return run(ctx, nil, "kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...)
}

// waitFor polls check until it returns nil or timeout passes; the error then is
// check's last one.
func waitFor(ctx context.Context, timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s: %w", timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
