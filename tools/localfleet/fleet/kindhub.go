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
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/cluster"

	"github.com/flotilla-io/flotilla/tools/images/build"
	"github.com/flotilla-io/flotilla/tools/nodeimage/node"
	"github.com/flotilla-io/flotilla/tools/toolchain"
)

// kindOverlay writes a kustomization in the fleet's folder that builds on a
// folder of manifests/ and returns its folder.
func (f *Fleet) kindOverlay(name, base, body string) (string, error) {
	dir := filepath.Join(f.opts.Dir, "kind", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	rel, err := filepath.Rel(dir, filepath.Join(f.opts.RepoRoot, "manifests", base))
	if err != nil {
		return "", err
	}
	data := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- " + rel + "\n" + body
	return dir, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(data), 0o644)
}

// installKindHub installs the hub with the fleet's image tag, its tunnel on a
// NodePort that it advertises at the hub node's address, and waits for both
// replicas to run: from manifests/hub, or with charts/flotilla-hub when
// Options.HubFromChart.
func (f *Fleet) installKindHub(ctx context.Context, provider *cluster.Provider, st *State, hubCluster string) error {
	nodes, err := provider.ListInternalNodes(hubCluster)
	if err != nil || len(nodes) == 0 {
		return fmt.Errorf("failed to find the hub cluster's node: %w", err)
	}
	ip, _, err := nodes[0].IP()
	if err != nil {
		return fmt.Errorf("failed to read the hub node's address: %w", err)
	}
	st.HubTunnelAddress = fmt.Sprintf("%s:%d", ip, hubNodePort)
	if err := f.saveState(st); err != nil {
		return err
	}
	hub := f.HubKubeconfig()
	if f.opts.HubFromChart {
		err = f.installKindHubChart(ctx, st)
	} else {
		err = f.applyKindHubManifests(ctx, st)
	}
	if err != nil {
		return err
	}
	if _, err := kubectl(ctx, hub, "-n", hubNamespace, "rollout", "status", "deployment/flotilla-hub", "--timeout", "5m"); err != nil {
		return fmt.Errorf("the hub Deployment did not roll out: %w\n%s", err, f.describePods(ctx, hub, "app.kubernetes.io/name=flotilla-hub"))
	}
	if err := f.waitKindAPIServices(ctx); err != nil {
		return err
	}
	if err := f.writeServiceAccountKubeconfig(ctx); err != nil {
		return err
	}
	// `hub token create` reads the join information the hub publishes on start.
	return waitFor(ctx, 2*time.Minute, func() error {
		_, err := kubectl(ctx, hub, "-n", hubNamespace, "get", "configmap", "flotilla-hub-info")
		return err
	})
}

// applyKindHubManifests applies manifests/hub through a kustomize overlay that
// sets the image tag, the NodePort and the hub's flags.
func (f *Fleet) applyKindHubManifests(ctx context.Context, st *State) error {
	args := append([]string{"--tunnel-advertise-address=" + st.HubTunnelAddress}, f.opts.HubArgs...)
	var patch strings.Builder
	for _, a := range args {
		fmt.Fprintf(&patch, "    - {op: add, path: /spec/template/spec/containers/0/args/-, value: %s}\n", strconv.Quote(a))
	}
	dir, err := f.kindOverlay("hub", "hub", fmt.Sprintf(`images:
- name: %s
  newTag: %s
patches:
- target: {kind: Service, name: flotilla-hub}
  patch: |-
    - {op: replace, path: /spec/type, value: NodePort}
    - {op: add, path: /spec/ports/0/nodePort, value: %d}
- target: {kind: Deployment, name: flotilla-hub}
  patch: |-
%s`, build.HubImage, st.ImageTag, hubNodePort, patch.String()))
	if err != nil {
		return err
	}
	if _, err = kubectl(ctx, f.HubKubeconfig(), "apply", "-k", dir); err != nil {
		return err
	}
	// The API proxy's and the plan API's APIServices, which the chart renders.
	_, err = kubectl(ctx, f.HubKubeconfig(), "apply", "-f", filepath.Join(f.opts.RepoRoot, "manifests", "hub", "proxy"))
	return err
}

// waitKindAPIServices waits until the hub cluster's kube-apiserver forwards
// the API proxy and the plan API to the hub: a hub replica has written its CA
// into the APIServices and kube-apiserver reached it.
func (f *Fleet) waitKindAPIServices(ctx context.Context) error {
	hub := f.HubKubeconfig()
	for _, name := range []string{"v1beta1.proxy.flotilla.io", "v1beta1.plan.flotilla.io"} {
		if _, err := kubectl(ctx, hub, "wait", "--for", "condition=Available", "--timeout", "2m", "apiservice/"+name); err != nil {
			why, _ := kubectl(ctx, hub, "get", "apiservice", name, "-o", `jsonpath={.status.conditions[?(@.type=="Available")].message}`)
			return fmt.Errorf("APIService %s is not Available: %w: %s", name, err, why)
		}
	}
	return nil
}

// HubChartRelease is the Helm release a kind fleet installs the hub as.
const HubChartRelease = "flotilla-hub"

// kindHubValues are the values a kind fleet installs charts/flotilla-hub with:
// the image just built (loaded into the node, never pulled), the tunnel on
// NodePort hubNodePort advertised at advertise, and the fleet's hub flags.
func kindHubValues(tag, advertise string, hubArgs []string) map[string]any {
	extra := []string{}
	extra = append(extra, hubArgs...)
	return map[string]any{
		"image": map[string]any{"repository": build.HubImage, "tag": tag},
		"tunnel": map[string]any{
			"advertiseAddress": advertise,
			"service":          map[string]any{"type": "NodePort", "nodePort": hubNodePort},
		},
		"extraArgs": extra,
	}
}

// writeKindHubValues writes kindHubValues to a file (JSON, which is YAML) for
// helm --values.
func writeKindHubValues(file, tag, advertise string, hubArgs []string) error {
	data, err := json.MarshalIndent(kindHubValues(tag, advertise, hubArgs), "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return os.WriteFile(file, data, 0o644)
}

// installKindHubChart installs charts/flotilla-hub with the pinned helm, as
// docs/operations/helm.md tells users to (the chart brings the CRDs).
func (f *Fleet) installKindHubChart(ctx context.Context, st *State) error {
	helm, err := toolchain.Helm(f.opts.RepoRoot)
	if err != nil {
		return err
	}
	values := filepath.Join(f.opts.Dir, "kind", "hub-values.yaml")
	if err := writeKindHubValues(values, st.ImageTag, st.HubTunnelAddress, f.opts.HubArgs); err != nil {
		return err
	}
	// Helm's caches and settings stay in the fleet's folder.
	home := filepath.Join(f.opts.Dir, "helm")
	env := []string{"HELM_CACHE_HOME=" + filepath.Join(home, "cache"), "HELM_CONFIG_HOME=" + filepath.Join(home, "config"), "HELM_DATA_HOME=" + filepath.Join(home, "data")}
	out, err := run(ctx, env, helm, "upgrade", "--install", HubChartRelease, filepath.Join(f.opts.RepoRoot, "charts", "flotilla-hub"),
		"--kubeconfig", f.HubKubeconfig(), "--namespace", hubNamespace, "--create-namespace", "--values", values)
	_ = os.WriteFile(filepath.Join(f.LogDir(), "helm-install-hub.log"), []byte(out), 0o644)
	return err
}

// describePods summarises the pods of a selector, for an error message.
func (f *Fleet) describePods(ctx context.Context, kubeconfig, selector string) string {
	out, _ := kubectl(ctx, kubeconfig, "get", "pods", "-A", "-l", selector, "-o",
		`jsonpath={range .items[*]}{.metadata.name}: {.status.phase} {range .status.containerStatuses[*]}{.state}{end}{"\n"}{end}`)
	return out
}

// joinKindMember runs what a user runs: `hub token create`, then the printed
// `agent join` with --install, which runs the agent as a pod of the member.
func (f *Fleet) joinKindMember(ctx context.Context, st *State, m Member) error {
	args := []string{"token", "create", "--kubeconfig", f.HubServiceAccountKubeconfig(),
		"--ttl", "1h", "--name", m.Name, "--member-kubeconfig", f.MemberKubeconfig(m.Name)}
	if len(m.Labels) > 0 {
		args = append(args, "--labels", formatLabels(m.Labels))
	}
	out, err := run(ctx, nil, f.HubBinary(), args...)
	if err != nil {
		return err
	}
	join := strings.Fields(strings.TrimSpace(out))
	if len(join) < 2 || join[0] != "agent" || join[1] != "join" {
		return fmt.Errorf("hub token create printed %q, not an agent join command", out)
	}
	join = append(join[1:], "--install", "--image", build.AgentImage+":"+st.ImageTag)
	cmd := exec.CommandContext(ctx, filepath.Join(f.bin, "agent"), join...)
	b, err := cmd.CombinedOutput()
	_ = os.WriteFile(filepath.Join(f.LogDir(), "join-"+m.Name+".log"), b, 0o644)
	if err != nil {
		return fmt.Errorf("agent join --install failed: %w: %s", err, strings.TrimSpace(string(b)))
	}
	return nil
}

// scaleKindAgent stops (0) or starts (1) a member's agent Deployment and waits
// until its pod is gone or running.
func (f *Fleet) scaleKindAgent(ctx context.Context, st *State, member string, replicas int) error {
	if !memberKnown(st, member) {
		return fmt.Errorf("%q is not a member of this fleet", member)
	}
	kc := f.MemberKubeconfig(member)
	if _, err := kubectl(ctx, kc, "-n", hubNamespace, "scale", "deployment/flotilla-agent", "--replicas", strconv.Itoa(replicas)); err != nil {
		return err
	}
	return waitFor(ctx, 2*time.Minute, func() error {
		out, err := kubectl(ctx, kc, "-n", hubNamespace, "get", "pods", "-l", "app.kubernetes.io/name=flotilla-agent",
			"-o", `jsonpath={range .items[*]}{.status.phase}{" "}{end}`)
		if err != nil {
			return err
		}
		phases := strings.Fields(out)
		if replicas == 0 && len(phases) > 0 {
			return fmt.Errorf("agent pods still there: %v", phases)
		}
		if replicas > 0 && (len(phases) != replicas || strings.Count(out, "Running") != replicas) {
			return fmt.Errorf("agent pods: %v", phases)
		}
		return nil
	})
}

// kindSamples is manifests/samples with the Deployment's image replaced by one
// every node carries (nothing can be pulled), so that its pods really run.
func (f *Fleet) kindSamples() (string, error) {
	pause, err := node.PauseImage(f.opts.RepoRoot)
	if err != nil {
		return "", err
	}
	i := strings.LastIndex(pause, ":")
	return f.kindOverlay("samples", "samples", fmt.Sprintf("images:\n- name: nginx\n  newName: %s\n  newTag: %q\n", pause[:i], pause[i+1:]))
}

// kindDemoPods waits until the sample Deployment's pods run on every member (real
// containers on kind) and prints them.
func (f *Fleet) kindDemoPods(ctx context.Context, st *State) error {
	for _, m := range st.Members {
		kc := f.MemberKubeconfig(m.Name)
		done := f.stepf("waiting for the sample Deployment's pods to run on %s", m.Name)
		err := waitFor(ctx, 3*time.Minute, func() error {
			out, err := kubectl(ctx, kc, "-n", "demo", "get", "deployment", "web", "-o", "jsonpath={.spec.replicas} {.status.readyReplicas}")
			if err != nil {
				return err
			}
			if fields := strings.Fields(out); len(fields) != 2 || fields[0] != fields[1] {
				return fmt.Errorf("deployment demo/web: want/ready replicas %q", out)
			}
			return nil
		})
		if err := done(err); err != nil {
			return fmt.Errorf("%w\n%s", err, f.describePods(ctx, kc, "app=web"))
		}
		out, err := kubectl(ctx, kc, "-n", "demo", "get", "pods", "-o", "wide")
		if err != nil {
			return err
		}
		fmt.Fprintf(f.opts.Out, "\n$ kubectl --kubeconfig %s -n demo get pods -o wide\n%s", kc, out)
	}
	return nil
}
