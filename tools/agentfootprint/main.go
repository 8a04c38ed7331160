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

// Command agentfootprint measures what an idle agent costs on a member cluster:
// its resident memory (split into anonymous memory — heap and stacks — and
// file-backed pages of the binary) and the CPU it uses over a window of
// idleness. It reports numbers and never fails on them.
//
// On a one-member kwok fleet it adds fake nodes and a Deployment of --pods
// running pods to the member, places manifests/samples, stops the fleet's own
// agent and then, for each --variant (a set of environment variables such as
// GOMEMLIMIT=20MiB), starts `agent run` afresh, lets it settle, and samples
// /proc for --window.
//
//	go run ./tools/agentfootprint                        # brings a fleet up in a temporary folder, and down after
//	go run ./tools/agentfootprint --variant '' --variant 'GOMEMLIMIT=20MiB'
//	go run ./tools/agentfootprint --agent-binary /tmp/agent-before   # another build of the agent
//
// The agent is built the way `make images` builds it (static, stripped), since
// that is what runs in a member cluster, unless --agent-binary names another.
package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/tools/localfleet/fleet"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newCommand().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "agentfootprint: %v\n", err)
		os.Exit(1)
	}
}

type options struct {
	fleetDir    string
	keep        bool
	pods        int
	nodes       int
	settle      time.Duration
	window      time.Duration
	variants    []string
	agentBinary string
}

func newCommand() *cobra.Command {
	o := options{pods: 1000, nodes: 10, settle: time.Minute, window: 2 * time.Minute}
	cmd := &cobra.Command{
		Use:           "agentfootprint",
		Short:         "Measure the idle agent's memory and CPU on a kwok member with many pods",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE:          func(cmd *cobra.Command, _ []string) error { return run(cmd.Context(), o) },
	}
	cmd.Flags().StringVar(&o.fleetDir, "fleet-dir", o.fleetDir, "Use the fleet already up in this folder; its first member is measured (default: bring a one-member fleet up in a temporary folder and remove it after).")
	cmd.Flags().BoolVar(&o.keep, "keep", o.keep, "Leave the fleet the tool brought up (its folder is printed).")
	cmd.Flags().IntVar(&o.pods, "pods", o.pods, "Running pods on the member.")
	cmd.Flags().IntVar(&o.nodes, "nodes", o.nodes, "Fake nodes on the member (at least pods/110).")
	cmd.Flags().DurationVar(&o.settle, "settle", o.settle, "Time the agent gets after it starts before the window begins.")
	cmd.Flags().DurationVar(&o.window, "window", o.window, "Window of idleness over which CPU is measured and memory sampled.")
	cmd.Flags().StringArrayVar(&o.variants, "variant", []string{""}, `Environment of one agent run, as space-separated NAME=VALUE ("" for none); repeatable, measured in order.`)
	cmd.Flags().StringVar(&o.agentBinary, "agent-binary", "", "Agent binary to measure (default: build ./agent as `make images` does).")
	return cmd
}

func run(ctx context.Context, o options) error {
	if o.pods < 0 || o.nodes < 1 || o.nodes*110 < o.pods {
		return fmt.Errorf("--nodes %d cannot hold --pods %d (110 pods a node)", o.nodes, o.pods)
	}
	if o.window < 10*time.Second {
		return fmt.Errorf("--window %s is too short: at least 10s", o.window)
	}
	variants := make([][]string, 0, len(o.variants))
	for _, v := range o.variants {
		env := strings.Fields(v)
		for _, kv := range env {
			if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
				return fmt.Errorf("--variant %q: %q is not NAME=VALUE", v, kv)
			}
		}
		variants = append(variants, env)
	}
	dir := o.fleetDir
	if dir == "" {
		tmp, stop, err := fleet.Temporary(ctx, "agentfootprint", fleet.Options{Members: 1, Out: os.Stderr}, o.keep)
		if err != nil {
			return err
		}
		defer stop()
		dir = tmp
	}
	f, err := fleet.New(fleet.Options{Dir: dir, Out: os.Stderr})
	if err != nil {
		return err
	}
	st, err := f.State()
	if err != nil || len(st.Members) == 0 {
		return fmt.Errorf("no fleet with members in %s: %w", dir, err)
	}
	member := st.Members[0].Name
	kubeconfig := f.MemberKubeconfig(member)

	binary := o.agentBinary
	if binary == "" {
		if binary, err = buildAgent(ctx, dir); err != nil {
			return err
		}
	}
	step("adding nodes and %d running pods to %s", o.pods, member)
	if err := addLoad(ctx, kubeconfig, o.nodes, o.pods); err != nil {
		return err
	}
	step("placing manifests/samples")
	if err := f.Demo(ctx); err != nil {
		return err
	}
	// The fleet's state names the agent process it started ("agent/<member>"),
	// unless an earlier run stopped it.
	_, running := st.Processes["agent/"+member]
	if running {
		step("stopping the fleet's agent of %s; each variant runs its own", member)
		if err := f.StopAgent(ctx, member); err != nil {
			return err
		}
	}
	if running && o.fleetDir != "" {
		defer func() {
			if err := f.StartAgent(context.WithoutCancel(ctx), member); err != nil {
				fmt.Fprintf(os.Stderr, "agentfootprint: restarting the fleet's agent: %v\n", err)
			}
		}()
	}

	var results []result
	for _, env := range variants {
		r, err := measure(ctx, f, binary, kubeconfig, member, env, o)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	info, _ := os.Stat(binary)
	size := int64(0)
	if info != nil {
		size = info.Size()
	}
	fmt.Printf("\nmachine: %d CPUs, %s/%s, %s, load average %s; member %s: %d nodes, %d running pods, placed manifests/samples\n",
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), loadAverage(), member, o.nodes, o.pods)
	fmt.Printf("agent binary: %s (%.0f MiB); settle %s, window %s\n\n", binary, mib(size), o.settle, o.window)
	fmt.Println("End of the window (largest value sampled in it, once a second):")
	fmt.Println()
	fmt.Println("| agent | CPU over window | RSS | anonymous (heap, stacks) | file-backed (binary) | Go heap in use |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, r := range results {
		fmt.Printf("| %s | %.2f s | %.1f MiB (%.1f) | %.1f MiB (%.1f) | %.1f MiB (%.1f) | %.1f MiB |\n",
			r.name, r.cpu.Seconds(), mib(r.rss), mib(r.maxRSS), mib(r.anon), mib(r.maxAnon), mib(r.file), mib(r.maxFile), mib(r.heapInUse))
	}
	return nil
}

func step(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "==> "+format+"\n", args...)
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// buildAgent builds ./agent as `make images` does, into dir.
func buildAgent(ctx context.Context, dir string) (string, error) {
	out := filepath.Join(dir, "footprint")
	step("building the agent as `make images` does (static, stripped)")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out+"/", "./agent")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build failed: %w\n%s", err, b)
	}
	return filepath.Join(out, "agent"), nil
}

// loadNodeYAML is one fake node kwok keeps Ready.
const loadNodeYAML = `apiVersion: v1
kind: Node
metadata:
  name: %s
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {type: kwok, footprint: "yes"}
status:
  allocatable: {cpu: "32", memory: 128Gi, pods: "110"}
  capacity: {cpu: "32", memory: 128Gi, pods: "110"}
---
`

// loadDeploymentYAML is the Deployment whose pods fill the member.
const loadDeploymentYAML = `apiVersion: v1
kind: Namespace
metadata: {name: footprint-load}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: load, namespace: footprint-load}
spec:
  replicas: %d
  selector: {matchLabels: {app: load}}
  template:
    metadata: {labels: {app: load}}
    spec:
      containers:
      - name: c
        image: fake
        resources: {requests: {cpu: 1m, memory: 1Mi}}
`

// addLoad tops the member up to nodes fake nodes and pods running pods.
func addLoad(ctx context.Context, kubeconfig string, nodes, pods int) error {
	out, err := kubectl(ctx, kubeconfig, "", "get", "nodes", "-o", "name")
	if err != nil {
		return err
	}
	have := len(strings.Fields(out))
	var b strings.Builder
	for i := 1; i <= nodes-have; i++ {
		fmt.Fprintf(&b, loadNodeYAML, fmt.Sprintf("footprint-%d", i))
	}
	fmt.Fprintf(&b, loadDeploymentYAML, pods)
	if out, err := kubectl(ctx, kubeconfig, b.String(), "apply", "-f", "-"); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	deadline := time.Now().Add(10 * time.Minute)
	for {
		out, err := kubectl(ctx, kubeconfig, "", "get", "pods", "-A", "--field-selector=status.phase=Running", "-o", "name")
		running := len(strings.Fields(out))
		if err == nil && running >= pods {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d pods run after 10m (%w)", running, pods, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Second):
		}
	}
}

func kubectl(ctx context.Context, kubeconfig, stdin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	b, err := cmd.CombinedOutput()
	if err != nil {
		return string(b), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(b)))
	}
	return string(b), nil
}

type result struct {
	name                    string
	cpu                     time.Duration
	rss, maxRSS, anon, file int64
	maxAnon, maxFile        int64
	heapInUse               int64
}

// measure runs the agent with env, lets it settle, and samples it for the window.
func measure(ctx context.Context, f *fleet.Fleet, binary, kubeconfig, member string, env []string, o options) (result, error) {
	name := "defaults"
	if len(env) > 0 {
		name = "`" + strings.Join(env, " ") + "`"
	}
	metrics, err := freeAddress()
	if err != nil {
		return result{}, err
	}
	logPath := filepath.Join(f.LogDir(), "agent-"+member+"-footprint.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return result{}, err
	}
	defer logFile.Close()
	cmd := exec.Command(binary, "run", "--kubeconfig", kubeconfig, "--metrics-bind-address", metrics, "--health-probe-bind-address", "0")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	step("variant %s: starting the agent (log %s), settling for %s", name, logPath, o.settle)
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited: //nolint:errcheck // waiting for the agent to exit; it was told to stop
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited //nolint:errcheck // waiting for the killed agent to be reaped
		}
	}()
	pid := cmd.Process.Pid
	wait := func(d time.Duration) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-exited:
			return fmt.Errorf("the agent exited (%w); see %s", err, logPath)
		case <-time.After(d):
			return nil
		}
	}
	if err := wait(o.settle); err != nil {
		return result{}, err
	}
	if err := agentConnected(ctx, f.HubKubeconfig(), member); err != nil {
		return result{}, fmt.Errorf("after %s: %w; see %s", o.settle, err, logPath)
	}
	step("variant %s: sampling for %s", name, o.window)
	cpu0, err := cpuTime(pid)
	if err != nil {
		return result{}, err
	}
	r := result{name: name}
	end := time.Now().Add(o.window)
	for time.Now().Before(end) {
		if err := wait(time.Second); err != nil {
			return result{}, err
		}
		m, err := memory(pid)
		if err != nil {
			return result{}, err
		}
		r.maxRSS, r.maxAnon, r.maxFile = max(r.maxRSS, m.rss), max(r.maxAnon, m.anon), max(r.maxFile, m.file)
	}
	cpu1, err := cpuTime(pid)
	if err != nil {
		return result{}, err
	}
	m, err := memory(pid)
	if err != nil {
		return result{}, err
	}
	r.cpu, r.rss, r.anon, r.file = cpu1-cpu0, m.rss, m.anon, m.file
	// After the window: scraping costs the agent some CPU.
	r.heapInUse, err = scrapeGauge("http://"+metrics+"/metrics", "go_memstats_heap_inuse_bytes")
	if err != nil {
		return result{}, err
	}
	return r, nil
}

// agentConnected checks that the hub sees the member's agent connected.
func agentConnected(ctx context.Context, hubKubeconfig, member string) error {
	out, err := kubectl(ctx, hubKubeconfig, "", "get", "membercluster", member, "-o",
		`jsonpath={.status.conditions[?(@.type=="AgentConnected")].status}`)
	if err != nil {
		return err
	}
	if strings.TrimSpace(out) != "True" {
		return fmt.Errorf("member %s is AgentConnected=%q on the hub", member, out)
	}
	return nil
}

// clockTick is USER_HZ, the unit of /proc/PID/stat times (100 on Linux).
const clockTick = 100

// cpuTime is the user and system time the process used so far.
func cpuTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat: %q", pid, s)
	}
	// utime and stime are fields 14 and 15 of stat, 12 and 13 after the name.
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTick, nil
}

type mem struct{ rss, anon, file int64 }

// memory reads VmRSS, RssAnon and RssFile of the process.
func memory(pid int) (mem, error) {
	fh, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return mem{}, err
	}
	defer fh.Close()
	var m mem
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		var dst *int64
		switch k {
		case "VmRSS":
			dst = &m.rss
		case "RssAnon":
			dst = &m.anon
		case "RssFile":
			dst = &m.file
		default:
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return mem{}, fmt.Errorf("/proc/%d/status %s: %w", pid, k, err)
		}
		*dst = kb << 10
	}
	return m, sc.Err()
}

// scrapeGauge reads one unlabelled metric from a Prometheus text endpoint.
func scrapeGauge(url, name string) (int64, error) {
	resp, err := http.Get(url) //nolint:noctx // a local endpoint, once
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return int64(f), err
		}
	}
	return 0, fmt.Errorf("%s has no %s", url, name)
}

func freeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	if f := strings.Fields(string(data)); len(f) > 0 {
		return f[0]
	}
	return "unknown"
}
