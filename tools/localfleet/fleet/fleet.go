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
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/flotilla-io/flotilla/tools/toolchain"
)

// Options configures a fleet. Defaults are filled in by New.
type Options struct {
	// Dir holds everything the fleet makes. Default: <repo>/.localfleet.
	Dir string
	// RepoRoot is the Flotilla checkout (manifests, sources). Default: found from
	// the working directory.
	RepoRoot string
	// Members is the number of member clusters, named member-1..N. Default: 3.
	Members int
	// MemberLabels are the labels each member joins with, by member name.
	MemberLabels map[string]map[string]string
	// HubArgs are extra flags for the hub process (e2e uses short periods).
	HubArgs []string
	// AgentArgs are extra flags for every agent process.
	AgentArgs []string
	// HubBinary and AgentBinary, when both are set, are the hub and agent
	// binaries the fleet runs (the skew suite runs those of another version;
	// SetHubBinary and SetAgentBinary change them later), and the fleet
	// builds neither. Default: both built from RepoRoot into <Dir>/bin.
	HubBinary, AgentBinary string
	// HubManifests is the kustomization that installs the hub (CRDs, RBAC).
	// Default: <RepoRoot>/manifests/hub.
	HubManifests string
	// HubReplicas is how many hub processes run (replicas.go). With more than
	// one, agents reach them through a small TCP balancer. Default: 1.
	HubReplicas int
	// TunnelBalancer puts the balancer in front of the hub even with one
	// replica (the e2e fault suite cuts and delays connections through it,
	// and adds replicas later).
	TunnelBalancer bool
	// Out receives progress lines. Default: os.Stdout.
	Out io.Writer
	// HubAsMember joins the hub cluster itself as member HubMemberName at the end
	// of Up (`agent join --hub-as-member`), for compound placements. Kwok only.
	// Default: false.
	HubAsMember bool
	// HubFromChart installs the hub of a kind fleet with charts/flotilla-hub and
	// the pinned helm (`make tools` builds it) instead of from manifests/hub.
	// Kind only. Default: false.
	HubFromChart bool
	// Provider makes the clusters: ProviderKwok or ProviderKind. Default:
	// ProviderKwok. Down, agent stop|start and demo on an existing fleet use the
	// provider it was made with.
	Provider string
	// Prometheus runs the prometheus binary on PATH beside a kwok fleet,
	// scraping the hub replicas and the agents every second (prometheus.go),
	// and starts the hub with --prometheus-url pointing at it; without the
	// binary the fleet runs without one and says so. Kwok only. Default: false.
	Prometheus bool
}

// Fleet is a local fleet rooted at Options.Dir.
type Fleet struct {
	opts  Options
	tools toolchain.Dirs
	bin   string // where the hub and agent binaries are built
	// hubBinary and agentBinary are the binaries processes start from.
	hubBinary, agentBinary string
}

// HubCluster is the kwok cluster name of the hub.
const HubCluster = "flotilla-hub"

// clusterPrefix marks every kwok cluster the fleet makes, so Down can find them
// even without a state file.
const clusterPrefix = "flotilla-"

// New validates opts, fills defaults and finds the tools.
func New(opts Options) (*Fleet, error) {
	if opts.RepoRoot == "" {
		root, err := toolchain.RepoRoot()
		if err != nil {
			return nil, err
		}
		opts.RepoRoot = root
	}
	if opts.Dir == "" {
		opts.Dir = filepath.Join(opts.RepoRoot, ".localfleet")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	opts.Dir = dir
	if opts.Members == 0 {
		opts.Members = 3
	}
	if opts.Members < 0 || opts.Members > 20 {
		return nil, fmt.Errorf("--members must be between 1 and 20, got %d", opts.Members)
	}
	if opts.Out == nil {
		opts.Out = os.Stdout
	}
	if opts.HubReplicas == 0 {
		opts.HubReplicas = 1
	}
	if opts.HubReplicas < 1 || opts.HubReplicas > 5 {
		return nil, fmt.Errorf("--hub-replicas must be between 1 and 5, got %d", opts.HubReplicas)
	}
	if opts.Provider == "" {
		opts.Provider = ProviderKwok
	}
	if err := validProvider(opts.Provider); err != nil {
		return nil, err
	}
	if opts.HubAsMember && opts.Provider != ProviderKwok {
		return nil, fmt.Errorf("--hub-as-member needs --provider %s: on %s the agents run as pods, and the hub cluster's agent is not installed there", ProviderKwok, opts.Provider)
	}
	if opts.Prometheus && opts.Provider != ProviderKwok {
		return nil, fmt.Errorf("--prometheus needs --provider %s: on %s the hub runs as a pod, which cannot reach a Prometheus on this machine", ProviderKwok, opts.Provider)
	}
	if opts.HubFromChart && opts.Provider != ProviderKind {
		return nil, fmt.Errorf("--hub-chart needs --provider %s: on %s the hub runs as a process, not from a chart", ProviderKind, opts.Provider)
	}
	for name := range opts.MemberLabels {
		if !validMember(name, opts.Members) {
			return nil, fmt.Errorf("labels given for %q, which is not one of member-1..member-%d", name, opts.Members)
		}
	}
	if (opts.HubBinary == "") != (opts.AgentBinary == "") {
		return nil, fmt.Errorf("set both the hub and the agent binary, or neither")
	}
	if opts.HubManifests == "" {
		opts.HubManifests = filepath.Join(opts.RepoRoot, "manifests", "hub")
	}
	f := &Fleet{opts: opts, bin: filepath.Join(opts.Dir, "bin"), hubBinary: opts.HubBinary, agentBinary: opts.AgentBinary}
	if f.hubBinary == "" {
		f.hubBinary, f.agentBinary = filepath.Join(f.bin, "hub"), filepath.Join(f.bin, "agent")
	}
	return f, nil
}

func validMember(name string, n int) bool {
	for i := 1; i <= n; i++ {
		if name == MemberName(i) {
			return true
		}
	}
	return false
}

// MemberName is the name of the i-th member (1-based).
func MemberName(i int) string { return fmt.Sprintf("member-%d", i) }

// Dir is the folder holding the fleet's files.
func (f *Fleet) Dir() string { return f.opts.Dir }

// HubKubeconfig is the hub cluster's admin kubeconfig.
func (f *Fleet) HubKubeconfig() string { return filepath.Join(f.opts.Dir, "hub.kubeconfig") }

// HubServiceAccountKubeconfig is the kubeconfig the hub process runs with: a token
// of the ServiceAccount that manifests/hub creates.
func (f *Fleet) HubServiceAccountKubeconfig() string {
	return filepath.Join(f.opts.Dir, "hub-sa.kubeconfig")
}

// MemberKubeconfig is a member cluster's admin kubeconfig; that of the hub joined
// as member HubMemberName is HubKubeconfig.
func (f *Fleet) MemberKubeconfig(member string) string {
	if member == HubMemberName {
		return f.HubKubeconfig()
	}
	return filepath.Join(f.opts.Dir, member+".kubeconfig")
}

// LogDir holds the logs of every process the fleet runs.
func (f *Fleet) LogDir() string { return filepath.Join(f.opts.Dir, "logs") }

// State returns what the fleet has recorded about itself.
func (f *Fleet) State() (*State, error) { return f.loadState() }

func (f *Fleet) stepf(format string, args ...any) func(error) error {
	start := time.Now()
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(f.opts.Out, "==> %s\n", msg)
	return func(err error) error {
		if err != nil {
			fmt.Fprintf(f.opts.Out, "    FAILED after %s: %v\n", time.Since(start).Round(100*time.Millisecond), err)
			return fmt.Errorf("%s: %w", msg, err)
		}
		fmt.Fprintf(f.opts.Out, "    done in %s\n", time.Since(start).Round(100*time.Millisecond))
		return nil
	}
}

// Up creates the whole fleet. When a step fails it removes what it made and
// returns the step's error.
func (f *Fleet) Up(ctx context.Context) (err error) {
	if f.opts.Provider == ProviderKind {
		return f.upKind(ctx)
	}
	tools, err := toolchain.Find(f.opts.RepoRoot)
	if err != nil {
		return err
	}
	f.tools = tools
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
	st := &State{Processes: map[string]Process{}}
	for i := 1; i <= f.opts.Members; i++ {
		name := MemberName(i)
		st.Members = append(st.Members, Member{Name: name, Labels: f.opts.MemberLabels[name]})
	}
	if err := f.saveState(st); err != nil {
		return err
	}
	done := f.stepf("building hub and agent binaries")
	if err := done(f.buildBinaries(ctx)); err != nil {
		return err
	}
	done = f.stepf("creating hub cluster %s", HubCluster)
	if err := done(f.createCluster(ctx, st, HubCluster, f.HubKubeconfig(), nodeShape{count: 2, cpu: "8", memory: "32Gi"}, f.aggregationArgs(HubCluster)...)); err != nil {
		return err
	}
	for i, m := range st.Members {
		done = f.stepf("creating member cluster %s", m.Name)
		if err := done(f.createCluster(ctx, st, clusterPrefix+m.Name, f.MemberKubeconfig(m.Name), memberShape(i+1))); err != nil {
			return err
		}
	}
	done = f.stepf("installing the hub from manifests/hub")
	if err := done(f.installHub(ctx)); err != nil {
		return err
	}
	done = f.stepf("installing the ClusterProfile CRD (cluster-inventory-api) the hub publishes members into")
	if err := done(f.installClusterProfileCRD(ctx)); err != nil {
		return err
	}
	if f.opts.Prometheus {
		done = f.stepf("starting prometheus, scraping the hub and the agents every %s", PrometheusScrapeInterval)
		if err := done(f.startPrometheus(ctx, st)); err != nil {
			return err
		}
	}
	done = f.stepf("starting the hub with the flotilla-hub ServiceAccount's token")
	if err := done(f.startHub(ctx, st)); err != nil {
		return err
	}
	done = f.stepf("serving the API proxy through the hub cluster's kube-apiserver (APIService v1beta1.proxy.flotilla.io)")
	if err := done(f.serveAPIProxy(ctx, st)); err != nil {
		return err
	}
	for _, m := range st.Members {
		done = f.stepf("joining %s (hub token create, agent join, agent run)", m.Name)
		if err := done(f.joinMember(ctx, st, m)); err != nil {
			return err
		}
	}
	if f.opts.HubAsMember {
		done = f.stepf("joining the hub cluster as member %s (agent join --hub-as-member, agent run)", HubMemberName)
		if err := done(f.joinHubAsMember(ctx, st)); err != nil {
			return err
		}
	}
	done = f.stepf("checking that every kwok component (kube-controller-manager above all) runs")
	if err := done(f.ensureKwokComponents(ctx, st)); err != nil {
		return err
	}
	fmt.Fprintf(f.opts.Out, "fleet is up: hub + %d members; kubeconfigs in %s, logs in %s\n", len(st.Members), f.opts.Dir, f.LogDir())
	return nil
}

// Down removes every process, cluster and file the fleet made. It is safe to run
// when nothing (or only part of a fleet) exists.
func (f *Fleet) Down(ctx context.Context) error {
	st, err := f.loadState()
	if err != nil {
		return err
	}
	if f.tools.Kwok == "" {
		// Without kwokctl (tools removed since) the clusters' processes are still
		// stopped below and their folder removed.
		f.tools, _ = toolchain.Find(f.opts.RepoRoot)
	}
	var errs []error
	roles := make([]string, 0, len(st.Processes))
	for role := range st.Processes {
		roles = append(roles, role)
	}
	// Agents first, so they do not spin reconnecting to a hub that is gone.
	sort.Slice(roles, func(i, j int) bool { return roles[i] > roles[j] })
	for _, role := range roles {
		if err := stopProcess(ctx, st.Processes[role], 10*time.Second); err != nil {
			errs = append(errs, fmt.Errorf("failed to stop %s: %w", role, err))
		}
	}
	if err := f.downKind(ctx, st); err != nil {
		errs = append(errs, err)
	}
	clusters, err := f.kwokClusters(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	for _, c := range unique(append(st.Clusters, clusters...)) {
		if f.tools.Kwok == "" || st.Provider == ProviderKind {
			continue
		}
		if err := f.kwokctl(ctx, "delete", "cluster", "--name", c); err != nil {
			errs = append(errs, fmt.Errorf("failed to delete cluster %s: %w", c, err))
		}
	}
	// Whatever still runs from the fleet's folder (a component kwokctl lost track
	// of) is stopped too, so that nothing outlives Down.
	_ = waitFor(ctx, 10*time.Second, func() error {
		if left := f.LeftoverProcesses(); len(left) > 0 {
			return fmt.Errorf("still running: %v", left)
		}
		return nil
	})
	for _, p := range f.LeftoverProcesses() {
		var pid int
		if _, err := fmt.Sscanf(p, "%d:", &pid); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if len(errs) == 0 {
		if err := os.RemoveAll(f.opts.Dir); err != nil {
			errs = append(errs, fmt.Errorf("failed to remove %s: %w", f.opts.Dir, err))
		}
	}
	return errors.Join(errs...)
}

func unique(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func (f *Fleet) buildBinaries(ctx context.Context) error {
	// localfleet itself runs the tunnel balancer (replicas.go).
	pkgs := []string{"./tools/localfleet"}
	switch {
	case f.opts.HubBinary == "":
		pkgs = append(pkgs, "./hub", "./agent")
	case f.opts.HubReplicas == 1 && !f.opts.TunnelBalancer:
		return nil // given binaries and no balancer: nothing to build
	}
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-o", f.bin + "/"}, pkgs...)...)
	cmd.Dir = f.opts.RepoRoot
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build failed: %w\n%s", err, out)
	}
	return nil
}

// freeAddress returns a loopback address with a port nobody listens on now.
func freeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("failed to find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// run runs a command and returns its stdout; a failure carries stderr.
func run(ctx context.Context, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// HubBinary is the hub binary the fleet runs (also the `hub` CLI: token, drain, ...).
func (f *Fleet) HubBinary() string { return f.hubBinary }

// AgentBinary is the agent binary the fleet starts agents from.
func (f *Fleet) AgentBinary() string { return f.agentBinary }

// SetHubBinary makes hub replicas started from now on (StartHubReplica) run
// path: an upgrade in place is StopHubReplica, SetHubBinary,
// StartHubReplica.
func (f *Fleet) SetHubBinary(path string) { f.hubBinary = path }

// SetAgentBinary makes agents started from now on (StartAgent) run path.
func (f *Fleet) SetAgentBinary(path string) { f.agentBinary = path }

// ApplyHubManifests applies a hub kustomization (another version's CRDs and
// RBAC, for an upgrade) as Up does, and waits until every Flotilla CRD is
// Established.
func (f *Fleet) ApplyHubManifests(ctx context.Context, dir string) error {
	return f.applyHubManifests(ctx, dir)
}
