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

// Command latency measures, on a local kwok fleet, how long the hub takes to
// place things. It reports numbers and never fails on them:
//
//   - placement: from creating a ClusterResourcePlacement of one namespace with
//     one ConfigMap to the placement being Available on every member;
//   - edit: from changing that ConfigMap on the hub to the new value being on
//     every member.
//
// Each is measured --n times (after one warm-up round that is not counted) and
// printed as min / p50 / p99 / max.
//
//	go run ./tools/latency --n 20            # brings a fleet up in a temporary folder, and down after
//	go run ./tools/latency --fleet-dir .localfleet   # uses a fleet that is already up
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/tools/internal/stages"
	"github.com/flotilla-io/flotilla/tools/localfleet/fleet"
)

// pollInterval is how often the tool looks; it bounds the measurement error.
const pollInterval = 20 * time.Millisecond

func main() {
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newCommand().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "latency: %v\n", err)
		os.Exit(1)
	}
}

type options struct {
	n        int
	members  int
	fleetDir string
	keep     bool
	hubArgs  []string
	agentArg []string
	timeout  time.Duration
}

func newCommand() *cobra.Command {
	o := options{n: 20, members: 3, timeout: time.Minute}
	cmd := &cobra.Command{
		Use:           "latency",
		Short:         "Measure placement and edit latency on a local kwok fleet",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE:          func(cmd *cobra.Command, _ []string) error { return run(cmd.Context(), o) },
	}
	cmd.Flags().IntVar(&o.n, "n", o.n, "Measurements of each kind (after one warm-up round).")
	cmd.Flags().IntVar(&o.members, "members", o.members, "Members of the fleet the tool brings up.")
	cmd.Flags().StringVar(&o.fleetDir, "fleet-dir", o.fleetDir, "Use the fleet already up in this folder (default: bring one up in a temporary folder and remove it after).")
	cmd.Flags().BoolVar(&o.keep, "keep", o.keep, "Leave the fleet the tool brought up (its folder is printed).")
	cmd.Flags().StringArrayVar(&o.hubArgs, "hub-arg", nil, "Extra flag for the hub of the fleet the tool brings up (repeatable), e.g. --hub-arg=--zap-log-level=debug.")
	cmd.Flags().StringArrayVar(&o.agentArg, "agent-arg", nil, "Extra flag for every agent of the fleet the tool brings up (repeatable).")
	cmd.Flags().DurationVar(&o.timeout, "timeout", o.timeout, "How long one measurement may take before the tool gives up.")
	return cmd
}

func run(ctx context.Context, o options) error {
	if o.n < 1 {
		return fmt.Errorf("--n must be at least 1, got %d", o.n)
	}
	dir := o.fleetDir
	if dir == "" {
		tmp, stop, err := fleet.Temporary(ctx, "latency", fleet.Options{Members: o.members, Out: os.Stderr, HubArgs: o.hubArgs, AgentArgs: o.agentArg}, o.keep)
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
	if err != nil {
		return fmt.Errorf("no fleet in %s: %w", dir, err)
	}
	hub, err := newClient(f.HubKubeconfig())
	if err != nil {
		return err
	}
	var members []client.Client
	var names []string
	for _, m := range st.Members {
		c, err := newClient(f.MemberKubeconfig(m.Name))
		if err != nil {
			return err
		}
		members = append(members, c)
		names = append(names, m.Name)
	}
	if err := waitMembersReady(ctx, hub, names, 2*time.Minute); err != nil {
		return err
	}
	loadBefore := loadAverage()
	b := &bench{hub: hub, members: members, clusters: len(names), timeout: o.timeout}
	var place, edit []time.Duration
	// The hub's own account of each stage (flotilla_placement_stage_seconds),
	// read after each warm-up round and after each series.
	var placeStages, editStages []stages.Times
	var warm stages.Reading
	for i := 0; i <= o.n; i++ {
		d, err := b.placeOne(ctx, fmt.Sprintf("latency-%d", i))
		if err != nil {
			return err
		}
		if i > 0 { // round 0 warms up
			place = append(place, d)
		} else {
			warm = readStages(ctx, st.HubMetricsAddress)
		}
	}
	if r := readStages(ctx, st.HubMetricsAddress); r != nil && warm != nil {
		placeStages = r.Since(warm)
	}
	for i := 0; i <= o.n; i++ {
		d, err := b.editOnce(ctx, "latency-0", i)
		if err != nil {
			return err
		}
		if i > 0 {
			edit = append(edit, d)
		} else {
			warm = readStages(ctx, st.HubMetricsAddress)
		}
	}
	if r := readStages(ctx, st.HubMetricsAddress); r != nil && warm != nil {
		editStages = r.Since(warm)
	}
	if err := b.cleanup(ctx, o.n); err != nil {
		fmt.Fprintf(os.Stderr, "latency: cleanup: %v\n", err)
	}
	fmt.Printf("machine: %d CPUs, %s/%s, load average %s at the start and %s at the end; fleet: hub + %d kwok members; poll interval %s\n",
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, loadBefore, loadAverage(), len(names), pollInterval)
	report("placement -> Available on all members", place)
	report("hub edit -> on all members", edit)
	reportStages("placement", placeStages)
	reportStages("edit", editStages)
	return nil
}

// readStages reads the hub's stage histogram, or nil (said on stderr) when
// the hub cannot be read: the stages explain the numbers, they are not them.
func readStages(ctx context.Context, addr string) stages.Reading {
	if addr == "" {
		return nil
	}
	r, err := stages.Read(ctx, addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "latency: %v\n", err)
		return nil
	}
	return r
}

// reportStages prints where the hub says the time of a series went, stage by
// stage (each from the stage before it; the per-cluster stages once a cluster).
func reportStages(what string, ts []stages.Times) {
	if len(ts) == 0 {
		return
	}
	fmt.Printf("%s, by stage in the hub (mean / p50 / p99):", what)
	for _, t := range ts {
		fmt.Printf("  %s %s / %s / %s", t.Name, ms(t.Mean), ms(t.P50), ms(t.P99))
	}
	fmt.Println()
}

func ms(seconds float64) string {
	return time.Duration(seconds * float64(time.Second)).Round(time.Millisecond).String()
}

// loadAverage is the machine's 1-minute load average, or "unknown": on a shared
// machine it says how much the numbers owe to others.
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

func report(what string, ds []time.Duration) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	fmt.Printf("%-40s n=%d  min %s  p50 %s  p99 %s  max %s\n", what, len(ds),
		round(ds[0]), round(percentile(ds, 50)), round(percentile(ds, 99)), round(ds[len(ds)-1]))
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p int) time.Duration {
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

func round(d time.Duration) string { return d.Round(10 * time.Millisecond).String() }

func newClient(kubeconfig string) (client.Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("failed to load %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	s := k8sruntime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(clusterv1beta1.AddToScheme(s))
	utilruntime.Must(placementv1beta1.AddToScheme(s))
	return client.New(cfg, client.Options{Scheme: s})
}

type bench struct {
	hub      client.Client
	members  []client.Client
	clusters int
	timeout  time.Duration
}

// until polls check every pollInterval until it returns true.
func (b *bench) until(ctx context.Context, what string, check func() (bool, error)) error {
	deadline := time.Now().Add(b.timeout)
	for {
		ok, err := check()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %s", what, b.timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}

// placeOne creates a namespace with one ConfigMap, then times a placement of it
// until it is Available on every member.
func (b *bench) placeOne(ctx context.Context, name string) (time.Duration, error) {
	if err := b.hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return 0, err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "settings"}, Data: map[string]string{"round": "0"}}
	if err := b.hub.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return 0, err
	}
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: name}},
		},
	}
	start := time.Now()
	if err := b.hub.Create(ctx, crp); err != nil {
		return 0, err
	}
	err := b.until(ctx, "placement "+name+" Available", func() (bool, error) {
		got := &placementv1beta1.ClusterResourcePlacement{}
		if err := b.hub.Get(ctx, types.NamespacedName{Name: name}, got); err != nil {
			return false, err
		}
		c := conditions.Get(got.Status.Conditions, placementv1beta1.ConditionClusterResourcePlacementAvailable)
		return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == got.Generation && len(got.Status.PlacementStatuses) == b.clusters, nil
	})
	return time.Since(start), err
}

// editOnce changes the ConfigMap of a placed namespace and times it until every
// member has the new value.
func (b *bench) editOnce(ctx context.Context, namespace string, round int) (time.Duration, error) {
	key := types.NamespacedName{Namespace: namespace, Name: "settings"}
	want := fmt.Sprintf("edit-%d", round)
	patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"data":{"round":%q}}`, want)))
	start := time.Now()
	if err := b.hub.Patch(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "settings"}}, patch); err != nil {
		return 0, err
	}
	err := b.until(ctx, "edit "+want+" on every member", func() (bool, error) {
		for _, m := range b.members {
			cm := &corev1.ConfigMap{}
			if err := m.Get(ctx, key, cm); err != nil {
				if apierrors.IsNotFound(err) {
					return false, nil
				}
				return false, err
			}
			if cm.Data["round"] != want {
				return false, nil
			}
		}
		return true, nil
	})
	return time.Since(start), err
}

// cleanup deletes the placements and namespaces and waits for the placements to go.
func (b *bench) cleanup(ctx context.Context, n int) error {
	for i := 0; i <= n; i++ {
		name := fmt.Sprintf("latency-%d", i)
		_ = b.hub.Delete(ctx, &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: name}})
	}
	for i := 0; i <= n; i++ {
		name := fmt.Sprintf("latency-%d", i)
		if err := b.until(ctx, "placement "+name+" deleted", func() (bool, error) {
			err := b.hub.Get(ctx, types.NamespacedName{Name: name}, &placementv1beta1.ClusterResourcePlacement{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		}); err != nil {
			return err
		}
		_ = b.hub.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	}
	return nil
}

// waitMembersReady waits until every member is joined, connected and healthy.
func waitMembersReady(ctx context.Context, hub client.Client, names []string, timeout time.Duration) error {
	b := &bench{timeout: timeout}
	for _, n := range names {
		if err := b.until(ctx, "member "+n+" ready", func() (bool, error) {
			mc := &clusterv1beta1.MemberCluster{}
			if err := hub.Get(ctx, types.NamespacedName{Name: n}, mc); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			for _, t := range []string{clusterv1beta1.ConditionJoined, clusterv1beta1.ConditionAgentConnected, clusterv1beta1.ConditionHealthy} {
				if !conditions.IsTrue(mc.Status.Conditions, t) {
					return false, nil
				}
			}
			return true, nil
		}); err != nil {
			return err
		}
	}
	return nil
}
