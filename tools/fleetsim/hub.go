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
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// hubNamespace is the hub's namespace (tokens, CA, Leases).
const hubNamespace = "flotilla-system"

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat times.
const clockTicks = 100

// hubProcess runs the hub binary and samples its RSS and CPU time.
type hubProcess struct {
	bin, kubeconfig, logFile string
	args, env                []string
	tunnel, metrics, health  string
	// pprof is the hub's --pprof-bind-address, when one was given.
	pprof string

	mu        sync.Mutex
	cmd       *exec.Cmd
	exited    chan struct{}
	maxRSS    int64
	phaseRSS  int64   // largest RSS since takePhaseRSS
	cpuBefore float64 // CPU seconds of the processes that ended
	cpuNow    float64 // CPU seconds of the running process
}

// writeKubeconfig writes a kubeconfig for cfg (the test API server's admin).
func writeKubeconfig(cfg *rest.Config, path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "admin"}
	kc.CurrentContext = "hub"
	return clientcmd.WriteToFile(*kc, path)
}

func freeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func newHubProcess(bin, kubeconfig, logFile string, extra []string) (*hubProcess, error) {
	h := &hubProcess{bin: bin, kubeconfig: kubeconfig, logFile: logFile}
	for _, p := range []*string{&h.tunnel, &h.metrics, &h.health} {
		a, err := freeAddress()
		if err != nil {
			return nil, err
		}
		*p = a
	}
	h.args = append([]string{
		"--kubeconfig", kubeconfig, "--namespace", hubNamespace, "--replica-name", "fleetsim",
		"--tunnel-bind-address", h.tunnel, "--metrics-bind-address", h.metrics, "--health-probe-bind-address", h.health,
	}, extra...)
	for i, a := range extra {
		if a == "--pprof-bind-address" && i+1 < len(extra) {
			h.pprof = extra[i+1]
		} else if v, ok := strings.CutPrefix(a, "--pprof-bind-address="); ok {
			h.pprof = v
		}
	}
	return h, nil
}

// start runs the hub and waits until it is ready.
func (h *hubProcess) start(ctx context.Context) error {
	logf, err := os.OpenFile(h.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(h.bin, h.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), h.env...)
	// The hub dies with fleetsim, however fleetsim ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("failed to start the hub: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(exited) }()
	h.mu.Lock()
	h.cmd, h.exited, h.cpuNow = cmd, exited, 0
	h.mu.Unlock()
	go h.sample(cmd.Process.Pid, exited)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case <-exited:
			return fmt.Errorf("the hub exited at start; see %s", h.logFile)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		resp, err := http.Get("http://" + h.health + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the hub was not ready within 2m; see %s", h.logFile)
		}
	}
}

// stop ends the hub with SIGTERM (SIGKILL after 30s) and keeps its CPU time.
func (h *hubProcess) stop() {
	h.mu.Lock()
	cmd, exited := h.cmd, h.exited
	h.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
	h.mu.Lock()
	if st := cmd.ProcessState; st != nil {
		h.cpuBefore += (st.UserTime() + st.SystemTime()).Seconds()
	}
	h.cmd, h.cpuNow = nil, 0
	h.mu.Unlock()
}

// sample reads the hub's RSS and CPU time every second until it exits.
func (h *hubProcess) sample(pid int, exited <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		rss, cpu, err := procStats(pid)
		if err == nil {
			h.mu.Lock()
			h.maxRSS = max(h.maxRSS, rss)
			h.phaseRSS = max(h.phaseRSS, rss)
			h.cpuNow = cpu
			h.mu.Unlock()
		}
		select {
		case <-exited:
			return
		case <-t.C:
		}
	}
}

// usage returns the hub's largest RSS so far and its CPU seconds (every
// process it ran).
func (h *hubProcess) usage() (int64, float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.maxRSS, h.cpuBefore + h.cpuNow
}

// takePhaseRSS returns the largest RSS since it was last called and starts
// over.
func (h *hubProcess) takePhaseRSS() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	rss := h.phaseRSS
	h.phaseRSS = 0
	return rss
}

// procStats reads a process's resident set (bytes) and user+system CPU time.
func procStats(pid int) (int64, float64, error) {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, 0, err
	}
	var rss int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			rss = kb * 1024
		}
	}
	f.Close()
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return rss, 0, err
	}
	// Fields after the command (which may hold spaces) start after ')'.
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return rss, 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return rss, (utime + stime) / clockTicks, nil
}

// settle waits until every work queue of the hub's controllers is empty and
// no worker is busy (workqueue_depth and controller_runtime_active_workers on
// its metrics endpoint) at three readings a second apart, and returns how long
// that took. An empty queue alone is not enough: at 10 000 members a
// scheduling cycle under load took up to 37 s, and the steady window that
// began while four of them ran counted their writes.
func (h *hubProcess) settle(ctx context.Context, timeout time.Duration) (float64, error) {
	start := time.Now()
	quiet := 0
	for quiet < 3 {
		depth, err := h.queueDepth()
		if err != nil {
			return 0, err
		}
		if depth == 0 {
			quiet++
		} else {
			quiet = 0
		}
		if time.Since(start) > timeout {
			return 0, fmt.Errorf("the hub's work queues still hold %.0f items after %s", depth, timeout)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return float64(int64(time.Since(start).Seconds()*1000)) / 1000, nil
}

// queueDepth sums workqueue_depth and controller_runtime_active_workers over
// the hub's controllers: the items waiting and the items being worked on.
func (h *hubProcess) queueDepth() (float64, error) {
	resp, err := http.Get("http://" + h.metrics + "/metrics")
	if err != nil {
		return 0, fmt.Errorf("failed to read the hub's metrics: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	total := 0.0
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "workqueue_depth{") && !strings.HasPrefix(line, "controller_runtime_active_workers{") {
			continue
		}
		if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
			total += v
		}
	}
	return total, nil
}

// queueTimes is, by controller, what its work queue has counted so far:
// items handed to a worker, seconds they waited in the queue and seconds the
// workers spent on them (workqueue_{queue,work}_duration_seconds).
type queueTimes map[string]*controllerTimes

// controllerTimes is one controller's share of a phase (queueTimes.since).
type controllerTimes struct {
	Items       float64 `json:"items"`
	WaitSeconds float64 `json:"waitSeconds"`
	WorkSeconds float64 `json:"workSeconds"`
	// MeanWaitSeconds and MeanWorkSeconds are per item.
	MeanWaitSeconds float64 `json:"meanWaitSeconds"`
	MeanWorkSeconds float64 `json:"meanWorkSeconds"`
}

// queueTimes reads the hub's work queue histograms.
func (h *hubProcess) queueTimes() (queueTimes, error) {
	resp, err := http.Get("http://" + h.metrics + "/metrics")
	if err != nil {
		return nil, fmt.Errorf("failed to read the hub's metrics: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return parseQueueTimes(string(body)), nil
}

func parseQueueTimes(body string) queueTimes {
	out := queueTimes{}
	for _, line := range strings.Split(body, "\n") {
		var field func(*controllerTimes) *float64
		var rest string
		switch {
		case strings.HasPrefix(line, "workqueue_queue_duration_seconds_count{"):
			rest, field = strings.TrimPrefix(line, "workqueue_queue_duration_seconds_count{"), func(c *controllerTimes) *float64 { return &c.Items }
		case strings.HasPrefix(line, "workqueue_queue_duration_seconds_sum{"):
			rest, field = strings.TrimPrefix(line, "workqueue_queue_duration_seconds_sum{"), func(c *controllerTimes) *float64 { return &c.WaitSeconds }
		case strings.HasPrefix(line, "workqueue_work_duration_seconds_sum{"):
			rest, field = strings.TrimPrefix(line, "workqueue_work_duration_seconds_sum{"), func(c *controllerTimes) *float64 { return &c.WorkSeconds }
		default:
			continue
		}
		end := strings.LastIndexByte(rest, '}')
		if end < 0 {
			continue
		}
		name := parseLabels(rest[:end])["name"]
		v, err := strconv.ParseFloat(strings.TrimSpace(rest[end+1:]), 64)
		if name == "" || err != nil {
			continue
		}
		c := out[name]
		if c == nil {
			c = &controllerTimes{}
			out[name] = c
		}
		*field(c) = v
	}
	return out
}

// since returns what each controller did between before and q, leaving out
// the controllers that handled nothing.
func (q queueTimes) since(before queueTimes) map[string]*controllerTimes {
	out := map[string]*controllerTimes{}
	for name, now := range q {
		d := *now
		if b := before[name]; b != nil {
			d.Items -= b.Items
			d.WaitSeconds -= b.WaitSeconds
			d.WorkSeconds -= b.WorkSeconds
		}
		if d.Items < 1 {
			continue
		}
		d.MeanWaitSeconds = round3(d.WaitSeconds / d.Items)
		d.MeanWorkSeconds = round3(d.WorkSeconds / d.Items)
		d.WaitSeconds, d.WorkSeconds = round3(d.WaitSeconds), round3(d.WorkSeconds)
		out[name] = &d
	}
	return out
}

func round3(v float64) float64 { return float64(int64(v*1000)) / 1000 }

// writeCounts reads the API server's apiserver_request_total and returns the
// write requests (every verb but GET, LIST, WATCH and CONNECT) by resource
// (with its subresource, e.g. memberclusters/status).
func writeCounts(ctx context.Context, rc rest.Interface) (map[string]float64, error) {
	body, err := rc.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("failed to read the API server's metrics: %w", err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		rest, ok := strings.CutPrefix(line, "apiserver_request_total{")
		if !ok {
			continue
		}
		end := strings.LastIndexByte(rest, '}')
		if end < 0 {
			continue
		}
		labels := parseLabels(rest[:end])
		switch labels["verb"] {
		case "GET", "LIST", "WATCH", "CONNECT":
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest[end+1:]), 64)
		if err != nil {
			continue
		}
		res := labels["resource"]
		if sub := labels["subresource"]; sub != "" {
			res += "/" + sub
		}
		out[res] += v
	}
	return out, nil
}

// counters are the hub's queue times and the API server's write counts at
// one moment: a phase's cost is the difference of two.
type counters struct {
	queues queueTimes
	writes map[string]float64
}

func (s *sim) counters(ctx context.Context) (counters, error) {
	q, err := s.hub.queueTimes()
	if err != nil {
		return counters{}, err
	}
	w, err := writeCounts(ctx, s.kube.Discovery().RESTClient())
	if err != nil {
		return counters{}, err
	}
	return counters{queues: q, writes: w}, nil
}

// since returns the time by hub controller and the writes by resource (only
// those written) from before to c.
func (c counters) since(before counters) (map[string]*controllerTimes, map[string]float64) {
	writes := map[string]float64{}
	for res, n := range c.writes {
		if d := n - before.writes[res]; d > 0 {
			writes[res] = d
		}
	}
	return c.queues.since(before.queues), writes
}

func parseLabels(s string) map[string]string {
	out := map[string]string{}
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq < 0 || eq+1 >= len(s) || s[eq+1] != '"' {
			break
		}
		key := s[:eq]
		rest := s[eq+2:]
		end := strings.IndexByte(rest, '"')
		if end < 0 {
			break
		}
		out[key] = rest[:end]
		s = strings.TrimPrefix(rest[end+1:], ",")
	}
	return out
}

// cycleMetric is the scheduler's histogram of its cycles
// (hub/scheduler/framework/metrics.go).
const cycleMetric = "flotilla_scheduling_cycle_duration_seconds"
