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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
	kindlog "sigs.k8s.io/kind/pkg/log"

	"github.com/flotilla-io/flotilla/tools/images/build"
	"github.com/flotilla-io/flotilla/tools/nodeimage/node"
)

// kubeletPatch is merged into the KubeletConfiguration kind generates. kubelet
// v1.37 refuses cgroup v1 hosts unless failCgroupV1 is false; the node's
// containerd reports the cgroupfs driver (tools/nodeimage), named here too.
const kubeletPatch = `kind: KubeletConfiguration
apiVersion: kubelet.config.k8s.io/v1beta1
failCgroupV1: false
cgroupDriver: cgroupfs
`

// hubNodePort is where a kind fleet's hub serves its tunnel on the hub node, for
// agents in other clusters (across the podman network) and for `agent join`.
const hubNodePort = 30443

// kindPrefix starts the names of this fleet's kind clusters; it is derived from
// the fleet's folder, so that fleets in different folders never collide.
func (f *Fleet) kindPrefix() string {
	h := sha256.Sum256([]byte(f.opts.Dir))
	return "flotilla-" + hex.EncodeToString(h[:])[:6] + "-"
}

func (f *Fleet) kindProvider() *cluster.Provider {
	return cluster.NewProvider(cluster.ProviderWithPodman(), cluster.ProviderWithLogger(kindLogger{out: f.opts.Out}))
}

// kindKubeconfig is where a kind cluster's admin kubeconfig is written.
func (f *Fleet) kindKubeconfig(clusterName string) string {
	if clusterName == f.kindPrefix()+"hub" {
		return f.HubKubeconfig()
	}
	return f.MemberKubeconfig(strings.TrimPrefix(clusterName, f.kindPrefix()))
}

// upKind creates a fleet on kind: one single-node cluster for the hub and one per
// member, the hub installed from manifests/hub (or its chart) as a Deployment of
// the image just built, and each member joined with `agent join --install`.
func (f *Fleet) upKind(ctx context.Context) (err error) {
	if st, err := f.loadState(); err == nil && len(st.Clusters) > 0 {
		return fmt.Errorf("a fleet already exists in %s: run `localfleet down` first", f.opts.Dir)
	}
	if err := os.MkdirAll(f.LogDir(), 0o755); err != nil {
		return fmt.Errorf("failed to create %s: %w", f.LogDir(), err)
	}
	defer func() {
		if err != nil {
			fmt.Fprintf(f.opts.Out, "==> up failed; removing what it made\n")
			if derr := f.Down(context.WithoutCancel(ctx)); derr != nil {
				fmt.Fprintf(f.opts.Out, "    cleanup also failed: %v\n", derr)
			}
		}
	}()
	st := &State{Processes: map[string]Process{}, Provider: ProviderKind}
	for i := 1; i <= f.opts.Members; i++ {
		name := MemberName(i)
		st.Members = append(st.Members, Member{Name: name, Labels: f.opts.MemberLabels[name]})
	}
	if err := f.saveState(st); err != nil {
		return err
	}
	var nodeImage string
	done := f.stepf("checking podman and the kind node image (make node-image builds it once)")
	if err := done(f.ensureNodeImage(ctx, &nodeImage)); err != nil {
		return err
	}
	done = f.stepf("building hub and agent binaries")
	if err := done(f.buildBinaries(ctx)); err != nil {
		return err
	}
	done = f.stepf("building the hub and agent images")
	if err := done(f.buildKindImages(ctx, st)); err != nil {
		return err
	}
	provider := f.kindProvider()
	hubCluster := f.kindPrefix() + "hub"
	done = f.stepf("creating hub cluster %s (kind, %s)", hubCluster, nodeImage)
	if err := done(f.createKindCluster(ctx, provider, st, hubCluster, nodeImage)); err != nil {
		return err
	}
	for _, m := range st.Members {
		name := f.kindPrefix() + m.Name
		done = f.stepf("creating member cluster %s (kind)", name)
		if err := done(f.createKindCluster(ctx, provider, st, name, nodeImage)); err != nil {
			return err
		}
	}
	done = f.stepf("loading the hub image into the hub cluster and the agent image into the members")
	err = f.loadKindImage(provider, hubCluster, f.imageArchive(build.HubImage, st.ImageTag))
	for _, m := range st.Members {
		if err == nil {
			err = f.loadKindImage(provider, f.kindPrefix()+m.Name, f.imageArchive(build.AgentImage, st.ImageTag))
		}
	}
	if err := done(err); err != nil {
		return err
	}
	from := "manifests/hub"
	if f.opts.HubFromChart {
		from = "charts/flotilla-hub with helm"
	}
	done = f.stepf("installing the hub from %s (2 replicas of %s:%s, tunnel on NodePort %d)", from, build.HubImage, st.ImageTag, hubNodePort)
	if err := done(f.installKindHub(ctx, provider, st, hubCluster)); err != nil {
		return err
	}
	for _, m := range st.Members {
		done = f.stepf("joining %s (hub token create, agent join --install)", m.Name)
		if err := done(f.joinKindMember(ctx, st, m)); err != nil {
			return err
		}
	}
	fmt.Fprintf(f.opts.Out, "fleet is up on kind: hub + %d members; kubeconfigs in %s, logs in %s\n", len(st.Members), f.opts.Dir, f.LogDir())
	return nil
}

// ensureNodeImage checks podman and builds the node image if podman lacks it
// (a no-op when `make node-image` ran).
func (f *Fleet) ensureNodeImage(ctx context.Context, image *string) error {
	if _, err := exec.LookPath("podman"); err != nil {
		return fmt.Errorf("podman is missing: run `make podman` (kind fleets run their nodes in podman)")
	}
	b, err := node.NewBuilder(node.Options{RepoRoot: f.opts.RepoRoot, Out: f.opts.Out})
	if err != nil {
		return err
	}
	*image = b.Image()
	return b.Build(ctx)
}

func (f *Fleet) imageArchive(name, tag string) string {
	return filepath.Join(f.opts.Dir, "images", build.ArchiveName(name, tag))
}

// buildKindImages builds static linux binaries and packs them as the hub and
// agent images, tagged after their content so that each change rolls the pods.
func (f *Fleet) buildKindImages(ctx context.Context, st *State) error {
	binDir := filepath.Join(f.bin, "linux-amd64")
	version := "v0.0.0-dev"
	if out, err := run(ctx, nil, "git", "-C", f.opts.RepoRoot, "describe", "--tags", "--always", "--dirty"); err == nil {
		version = strings.TrimSpace(out)
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath",
		"-ldflags", "-s -w -X github.com/flotilla-io/flotilla/pkg/version.Version="+version,
		"-o", binDir+"/", "./hub", "./agent")
	cmd.Dir = f.opts.RepoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build failed: %w\n%s", err, out)
	}
	h := sha256.New()
	for _, b := range []string{"hub", "agent"} {
		data, err := os.ReadFile(filepath.Join(binDir, b))
		if err != nil {
			return err
		}
		h.Write(data)
	}
	st.ImageTag = "fleet-" + hex.EncodeToString(h.Sum(nil))[:12]
	if _, err := build.Images(build.Options{BinDir: binDir, OutDir: filepath.Join(f.opts.Dir, "images"), Tag: st.ImageTag, Version: version}); err != nil {
		return err
	}
	return f.saveState(st)
}

// createKindCluster creates a single-node kind cluster from the node image and
// writes its admin kubeconfig where the kwok provider writes it.
func (f *Fleet) createKindCluster(ctx context.Context, provider *cluster.Provider, st *State, name, image string) error {
	st.Clusters = append(st.Clusters, name)
	if err := f.saveState(st); err != nil {
		return err
	}
	cfg := &v1alpha4.Cluster{
		TypeMeta: v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"},
		Nodes:    []v1alpha4.Node{{Role: v1alpha4.ControlPlaneRole}},
		// The node image carries its own CNI configuration (ptp, for one node).
		Networking:           v1alpha4.Networking{DisableDefaultCNI: true},
		KubeadmConfigPatches: []string{kubeletPatch},
	}
	errc := make(chan error, 1)
	go func() {
		errc <- provider.Create(name,
			cluster.CreateWithV1Alpha4Config(cfg),
			cluster.CreateWithNodeImage(image),
			cluster.CreateWithKubeconfigPath(f.kindKubeconfig(name)),
			cluster.CreateWithWaitForReady(3*time.Minute),
			cluster.CreateWithDisplayUsage(false),
			cluster.CreateWithDisplaySalutation(false))
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		// kind's Create cannot be cancelled; Down removes what it made.
		return ctx.Err()
	}
}

// loadKindImage imports an image archive into every node of a kind cluster.
func (f *Fleet) loadKindImage(provider *cluster.Provider, clusterName, archive string) error {
	nodes, err := provider.ListInternalNodes(clusterName)
	if err != nil {
		return fmt.Errorf("failed to list the nodes of %s: %w", clusterName, err)
	}
	for _, n := range nodes {
		file, err := os.Open(archive)
		if err != nil {
			return err
		}
		err = nodeutils.LoadImageArchive(n, file)
		file.Close()
		if err != nil {
			return fmt.Errorf("failed to load %s into %s: %w", filepath.Base(archive), n.String(), err)
		}
	}
	return nil
}

// downKind deletes this fleet's kind clusters: those the state names and any
// other whose name carries the fleet's prefix.
func (f *Fleet) downKind(_ context.Context, st *State) error {
	if _, err := exec.LookPath("podman"); err != nil {
		if st.Provider == ProviderKind {
			return fmt.Errorf("podman is missing: cannot remove the kind clusters %v", st.Clusters)
		}
		return nil
	}
	provider := f.kindProvider()
	existing, err := provider.List()
	if err != nil {
		return fmt.Errorf("failed to list kind clusters: %w", err)
	}
	var errs []string
	for _, name := range existing {
		if !strings.HasPrefix(name, f.kindPrefix()) {
			continue
		}
		if err := provider.Delete(name, f.kindKubeconfig(name)); err != nil {
			errs = append(errs, fmt.Sprintf("failed to delete kind cluster %s: %v", name, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// kindLogger prints kind's warnings, errors and progress into the fleet's output.
type kindLogger struct{ out io.Writer }

func (l kindLogger) Warn(message string)               { fmt.Fprintln(l.out, "    kind: "+message) }
func (l kindLogger) Warnf(format string, args ...any)  { l.Warn(fmt.Sprintf(format, args...)) }
func (l kindLogger) Error(message string)              { fmt.Fprintln(l.out, "    kind: "+message) }
func (l kindLogger) Errorf(format string, args ...any) { l.Error(fmt.Sprintf(format, args...)) }
func (l kindLogger) V(level kindlog.Level) kindlog.InfoLogger {
	if level > 0 {
		return kindlog.NoopInfoLogger{}
	}
	return kindInfo(l)
}

type kindInfo struct{ out io.Writer }

func (l kindInfo) Info(message string)              { kindLine(l.out, message) }
func (l kindInfo) Infof(format string, args ...any) { l.Info(fmt.Sprintf(format, args...)) }
func (l kindInfo) Enabled() bool                    { return true }

// kindLine prints one of kind's messages indented, without its blank lines.
func kindLine(out io.Writer, message string) {
	if m := strings.TrimSpace(message); m != "" {
		fmt.Fprintln(out, "    kind: "+m)
	}
}

// KindNode is the podman container of a kind fleet's member node (each member
// cluster has one node).
func (f *Fleet) KindNode(member string) string {
	return f.kindPrefix() + member + "-control-plane"
}
