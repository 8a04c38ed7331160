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

// Command fleetsim measures what a fleet costs the hub. It runs a real hub
// process on a real API server (kube-apiserver and etcd, as envtest starts
// them) and N simulated members, each a real agent session: it joins with a
// bootstrap token over the join endpoint (a key and CSR of its own, the CA
// pinned by hash), then holds a tunnel with the signed certificate, sends
// heartbeats with constant properties, records the Work it is sent and reports
// it Applied and Available at once. Nothing in the hub is faked.
//
// Phases, in order: join and connect every member; create the placements (half
// PickAll with a group affinity, half PickN with a zone spread) and time each
// to Available; after --warmup, a steady window of --duration where nothing
// changes (API writes by resource, from the API server's own
// apiserver_request_total); then, when asked, bad members (garbage on an
// established tunnel), churn (--churn cuts a minute, for --churn-window),
// kills (--kill members holding PickN placements, lost for good: time until
// those placements are Available elsewhere), a zone loss (--zone-loss
// placements of one cluster preferring zone z0, with failback: every member of
// z0 lost, then restored; failover and failback times, moves per placement,
// ping-pong); and last a hub restart (time until every member has re-synced
// and every placement is Available, counting the Work the members were sent
// again).
//
// It reports numbers and never fails on them.
//
//	go run ./tools/fleetsim --members 2000 --placements 200 --duration 3m --json
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/join"
	"github.com/flotilla-io/flotilla/hub/tunnelserver"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
	"github.com/flotilla-io/flotilla/tools/internal/stages"
	"github.com/flotilla-io/flotilla/tools/toolchain"
)

// Label keys the simulated members join with.
const (
	labelZone  = "fleetsim.flotilla.io/zone"
	labelGroup = "fleetsim.flotilla.io/group"
)

// lostZone is the zone the zone-loss phase loses and restores; the zone-loss
// placements prefer it.
const lostZone = "z0"

func main() {
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newCommand(os.Stdout, os.Stderr).ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "fleetsim: %v\n", err)
		os.Exit(1)
	}
}

type options struct {
	members, placements, badMembers, kill int
	zoneLoss, failbackMaxConcurrent       int
	failbackStabilization                 time.Duration
	churn                                 float64
	duration, warmup, churnWindow         time.Duration
	settleTimeout                         time.Duration
	pickN, zones, groupSize               int
	restart                               bool
	json                                  bool
	hubBinary, workDir, profileDir        string
	hubArgs, hubEnv                       []string
	joinWorkers, dialWorkers              int
}

func defaultOptions() options {
	return options{members: 100, placements: 20, duration: 3 * time.Minute, warmup: 30 * time.Second, churnWindow: time.Minute,
		settleTimeout: 15 * time.Minute, pickN: 3, zones: 4, groupSize: 10, restart: true, joinWorkers: 16, dialWorkers: 32,
		failbackStabilization: 5 * time.Second, failbackMaxConcurrent: 10}
}

func newCommand(stdout, stderr io.Writer) *cobra.Command {
	o := defaultOptions()
	cmd := &cobra.Command{
		Use:           "fleetsim",
		Short:         "Simulate a fleet of members against a real hub and report what it costs",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			r, err := run(cmd.Context(), o, stderr)
			if r == nil {
				return err
			}
			// A failed run prints what it measured (with "error") and fails.
			if o.json {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				if jerr := enc.Encode(r); jerr != nil {
					return jerr
				}
				return err
			}
			r.print(stdout)
			return err
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.members, "members", o.members, "Simulated members (each a real agent session).")
	f.IntVar(&o.placements, "placements", o.placements, "ClusterResourcePlacements: even ones PickAll with a group affinity (--group-size members), odd ones PickN (--pick-n) spread over zones.")
	f.DurationVar(&o.duration, "duration", o.duration, "Steady window: nothing changes, API writes are counted.")
	f.DurationVar(&o.warmup, "warmup", o.warmup, "Wait after every placement is Available, and then until the hub's work queues are empty, before the steady window.")
	f.Float64Var(&o.churn, "churn", o.churn, "Members cut (no goodbye) and reconnected 3s later, per minute, during --churn-window after the steady window; 0 skips.")
	f.DurationVar(&o.churnWindow, "churn-window", o.churnWindow, "How long the churn phase lasts.")
	f.IntVar(&o.kill, "kill", o.kill, "Members holding PickN placements lost for good after the steady window (failover is timed); 0 skips.")
	f.IntVar(&o.zoneLoss, "zone-loss", o.zoneLoss, "Extra PickN placements of one cluster preferring zone "+lostZone+" (clusterPreferences, failback); after the kills every member of "+lostZone+" is lost, then restored, and their failover and failback are timed; 0 skips.")
	f.DurationVar(&o.failbackStabilization, "failback-stabilization", o.failbackStabilization, "The zone-loss placements' failback.stabilizationSeconds.")
	f.IntVar(&o.failbackMaxConcurrent, "failback-max-concurrent", o.failbackMaxConcurrent, "The zone-loss placements' failback.maxConcurrent.")
	f.IntVar(&o.badMembers, "bad-members", o.badMembers, "Extra members that send garbage on their established tunnel; each must be closed without disturbing the others.")
	f.BoolVar(&o.restart, "restart", o.restart, "Restart the hub at the end and time the re-sync.")
	f.IntVar(&o.pickN, "pick-n", o.pickN, "Clusters each PickN placement picks.")
	f.IntVar(&o.zones, "zones", o.zones, "Zones the members are spread over (the PickN placements' topology key).")
	f.IntVar(&o.groupSize, "group-size", o.groupSize, "Members per group (a PickAll placement selects one group).")
	f.DurationVar(&o.settleTimeout, "settle-timeout", o.settleTimeout, "How long joining, placing, failover or re-sync may take before fleetsim gives up.")
	f.BoolVar(&o.json, "json", o.json, "Print one JSON object instead of the summary.")
	f.StringVar(&o.hubBinary, "hub-binary", o.hubBinary, "Hub binary to run (default: build ./hub into the work folder).")
	f.StringVar(&o.profileDir, "profile-dir", o.profileDir, "Serve the hub's pprof and save its heap and goroutine profiles here at the end of the steady window (reported as steadyProfile).")
	f.StringVar(&o.workDir, "work-dir", o.workDir, "Folder for the hub's log and kubeconfig (default: a temporary folder, removed unless the run fails).")
	f.StringArrayVar(&o.hubArgs, "hub-arg", nil, "Extra hub flag (repeatable), e.g. --hub-arg=--scheduler-workers=4.")
	f.StringArrayVar(&o.hubEnv, "hub-env", nil, "Extra NAME=VALUE in the hub's environment (repeatable), e.g. --hub-env=GOMEMLIMIT=1536MiB.")
	f.IntVar(&o.joinWorkers, "join-workers", o.joinWorkers, "Joins at once.")
	f.IntVar(&o.dialWorkers, "dial-workers", o.dialWorkers, "Tunnel dials at once.")
	return cmd
}

// validate refuses impossible combinations, in one line each.
func (o options) validate() error {
	switch {
	case o.members < 1:
		return fmt.Errorf("--members must be at least 1, got %d", o.members)
	case o.placements < 0:
		return fmt.Errorf("--placements must not be negative, got %d", o.placements)
	case o.duration < 10*time.Second:
		return fmt.Errorf("--duration must be at least 10s (a steady window to count writes in), got %s", o.duration)
	case o.warmup < 0 || o.churnWindow <= 0 || o.settleTimeout <= 0:
		return fmt.Errorf("--warmup must not be negative, and --churn-window and --settle-timeout must be positive")
	case o.pickN < 1 || o.zones < 1 || o.groupSize < 1:
		return fmt.Errorf("--pick-n, --zones and --group-size must be at least 1")
	case o.placements > 1 && o.pickN > o.members:
		return fmt.Errorf("--pick-n %d is more than the %d members: no PickN placement could be Available", o.pickN, o.members)
	case o.kill < 0 || o.badMembers < 0 || o.churn < 0:
		return fmt.Errorf("--kill, --bad-members and --churn must not be negative")
	case o.kill > 0 && o.placements < 2:
		return fmt.Errorf("--kill %d needs PickN placements to fail over: use --placements 2 or more (odd ones are PickN)", o.kill)
	case o.kill > 0 && o.members-o.kill < o.pickN:
		return fmt.Errorf("--kill %d leaves %d members, fewer than --pick-n %d: the PickN placements could not fail over", o.kill, o.members-o.kill, o.pickN)
	case o.zoneLoss < 0:
		return fmt.Errorf("--zone-loss must not be negative, got %d", o.zoneLoss)
	case o.zoneLoss > 0 && o.zones < 2:
		return fmt.Errorf("--zone-loss needs --zones 2 or more: the placements fail over to another zone")
	case o.zoneLoss > 0 && (o.failbackStabilization < time.Second || o.failbackStabilization > 24*time.Hour || o.failbackStabilization%time.Second != 0):
		return fmt.Errorf("--failback-stabilization must be whole seconds from 1s to 24h, got %s", o.failbackStabilization)
	case o.zoneLoss > 0 && (o.failbackMaxConcurrent < 1 || o.failbackMaxConcurrent > 1000):
		return fmt.Errorf("--failback-max-concurrent must be from 1 to 1000, got %d", o.failbackMaxConcurrent)
	case o.churn > float64(o.members)*60:
		return fmt.Errorf("--churn %.0f a minute cuts each of the %d members more than once a second", o.churn, o.members)
	case !validEnv(o.hubEnv):
		return fmt.Errorf("--hub-env takes NAME=VALUE, got %q", o.hubEnv)
	case o.joinWorkers < 1 || o.dialWorkers < 1:
		return fmt.Errorf("--join-workers and --dial-workers must be at least 1")
	}
	return nil
}

func validEnv(env []string) bool {
	for _, e := range env {
		if name, _, ok := strings.Cut(e, "="); !ok || name == "" {
			return false
		}
	}
	return true
}

// quantiles are p50, p90, p99 and the largest, in seconds (nearest rank).
type quantiles struct {
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
	Count int     `json:"count"`
}

func quantilesOf(ds []time.Duration) *quantiles {
	if len(ds) == 0 {
		return nil
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	at := func(p float64) float64 {
		i := int(p*float64(len(ds))+0.999999) - 1
		return ds[min(max(i, 0), len(ds)-1)].Seconds()
	}
	return &quantiles{P50: round(at(0.5)), P90: round(at(0.9)), P99: round(at(0.99)), Max: round(at(1)), Count: len(ds)}
}

func round(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }

// report is what fleetsim prints (with --json, as one object).
type report struct {
	Members    int `json:"members"`
	Placements int `json:"placements"`
	// Bindings is how many clusters the placements picked in all.
	Bindings int `json:"bindings"`
	// JoinSeconds is how long joining and connecting every member took.
	JoinSeconds float64 `json:"joinSeconds"`
	// JoinSettleSeconds is how long, after the joins, the hub's controllers
	// took to empty their work queues (before the placements are created).
	JoinSettleSeconds float64 `json:"joinSettleSeconds"`
	// JoinControllers and JoinWrites are PlaceControllers and PlaceWrites for
	// joining: from the first join until the hub's queues are empty after
	// the last (what a member's join costs the hub and its API server).
	JoinControllers map[string]*controllerTimes `json:"joinControllers,omitempty"`
	JoinWrites      map[string]float64          `json:"joinWrites,omitempty"`
	// SettleSeconds is how long, after --warmup, the hub's controllers took to
	// empty their work queues (the backlog of joining and placing).
	SettleSeconds float64 `json:"settleSeconds"`
	// SteadySeconds is the length of the steady window.
	SteadySeconds float64 `json:"steadySeconds"`
	// HubRSSBytes is the hub's largest resident set over the run; HubCPUSeconds
	// its CPU time over the run, HubCPUSecondsPerMinuteSteady during the steady window.
	HubRSSBytes int64 `json:"hubRSSBytes"`
	// HubRSSBytesByPhase is the hub's largest resident set in each phase
	// (join, joinSettle, place, settle, steady, badMembers, churn, kill, restart).
	HubRSSBytesByPhase           map[string]int64 `json:"hubRSSBytesByPhase"`
	HubCPUSeconds                float64          `json:"hubCPUSeconds"`
	HubCPUSecondsPerMinuteSteady float64          `json:"hubCPUSecondsPerMinuteSteady"`
	// APIWritesPerMinute are the API server's write requests a minute in the
	// steady window, by resource (and subresource).
	APIWritesPerMinute           map[string]float64 `json:"apiWritesPerMinute"`
	MemberClusterWritesPerMinute float64            `json:"memberClusterWritesPerMinute"`
	// PlacementAvailableSeconds: from creating a placement to Available.
	PlacementAvailableSeconds *quantiles `json:"placementAvailableSeconds"`
	// PlaceControllers is where placing spent its time, by hub controller:
	// items, seconds waiting in the controller's queue and seconds of work,
	// from creating the first placement until every one is Available.
	PlaceControllers map[string]*controllerTimes `json:"placeControllers,omitempty"`
	// PlaceWrites are the API writes while placing, by resource: what the
	// pipeline costs the API server for these placements.
	PlaceWrites map[string]float64 `json:"placeWrites,omitempty"`
	// PlaceStages is where placing spent its time, by stage of the pipeline
	// (flotilla_placement_stage_seconds: each stage timed from the one before
	// it, the per-cluster stages once a cluster).
	PlaceStages []stages.Times `json:"placeStages,omitempty"`
	// PlaceCycles are the scheduler's cycles while placing, by placement type
	// (flotilla_scheduling_cycle_duration_seconds, inside the hub).
	PlaceCycles []stages.Times `json:"placeCycles,omitempty"`
	// FailoverSeconds: from killing members to their PickN placements being
	// Available on other clusters (with --kill).
	FailoverSeconds *quantiles `json:"failoverSeconds,omitempty"`
	// ResyncSeconds: from starting the hub again to every member re-synced
	// and every placement Available; ResyncReapplies counts the Work members
	// were sent again although they held it (0: re-sync by hash).
	ResyncSeconds   *float64 `json:"resyncSeconds,omitempty"`
	ResyncReapplies *int64   `json:"resyncReapplies,omitempty"`
	// Churn (with --churn): members cut a minute, and the MemberCluster
	// writes a minute it caused.
	Churn *churnReport `json:"churn,omitempty"`
	// ZoneLoss (with --zone-loss): a zone lost and restored.
	ZoneLoss *zoneLossReport `json:"zoneLoss,omitempty"`
	// BadMembers (with --bad-members): how many the hub closed, and how many
	// sessions of other members dropped meanwhile.
	BadMembers *badReport `json:"badMembers,omitempty"`
	// SteadyProfile (with --profile-dir): the hub at the end of the steady
	// window.
	SteadyProfile *steadyProfile `json:"steadyProfile,omitempty"`
	// Error is why the run failed, when it did: the figures before it are
	// those of the phases that completed.
	Error string `json:"error,omitempty"`
	// Load is the machine's 1-minute load average at the start and the end.
	Load [2]string `json:"load"`
}

type churnReport struct {
	CutsPerMinute                float64 `json:"cutsPerMinute"`
	Cuts                         int     `json:"cuts"`
	MemberClusterWritesPerMinute float64 `json:"memberClusterWritesPerMinute"`
}

// zoneLossReport is the zone-loss phase: every member of Zone lost, then
// restored, and the placements that prefer it.
type zoneLossReport struct {
	Zone string `json:"zone"`
	// Members is how many members were lost and restored.
	Members int `json:"members"`
	// Placements is how many placements were on the zone when it was lost.
	Placements int `json:"placements"`
	// StabilizationSeconds and MaxConcurrent are the placements' failback policy.
	StabilizationSeconds int `json:"stabilizationSeconds"`
	MaxConcurrent        int `json:"maxConcurrent"`
	// FailoverSeconds: from losing the zone to each placement Available on a
	// member of another zone.
	FailoverSeconds *quantiles `json:"failoverSeconds,omitempty"`
	// FailbackSeconds: from restoring the zone to each placement Available on
	// a member of the zone alone again.
	FailbackSeconds *quantiles `json:"failbackSeconds,omitempty"`
	// Moves counts the placements by how many bindings were created for them
	// over the phase ("2": 100 is one move out and one back for 100
	// placements); MovesMax is the most any placement had.
	Moves    map[string]int `json:"moves,omitempty"`
	MovesMax int            `json:"movesMax"`
	// FailoverHops counts the placements bound more than once while the zone
	// was lost (a replacement on a member of the zone the hub had not yet
	// marked unreachable, then another).
	FailoverHops int `json:"failoverHops"`
	// PingPong counts the placements bound more than once after the restore,
	// or moved again after they were back (watched for the stabilization
	// window plus 10s after the last came back).
	PingPong int `json:"pingPong"`
	// NoCopyDuringFailback counts the placements seen with no cluster
	// Available between the restore and being back (from the placement's
	// per-cluster status, as the watch saw it).
	NoCopyDuringFailback int `json:"noCopyDuringFailback"`
}

type badReport struct {
	Members            int     `json:"members"`
	Closed             int     `json:"closed"`
	OthersDropped      int64   `json:"othersDropped"`
	OthersStillSynced  int     `json:"othersStillSynced"`
	OthersInTheFleet   int     `json:"othersInTheFleet"`
	SecondsUntilClosed float64 `json:"secondsUntilClosed"`
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "fleetsim: %d members, %d placements (%d clusters picked in all), joined and connected in %.0fs\n", r.Members, r.Placements, r.Bindings, r.JoinSeconds)
	fmt.Fprintf(w, "  hub: max RSS %.0f MiB, CPU %.1fs over the run, %.2fs a minute in the steady window\n", float64(r.HubRSSBytes)/(1<<20), r.HubCPUSeconds, r.HubCPUSecondsPerMinuteSteady)
	fmt.Fprintf(w, "  hub settled (work queues empty) %.0fs after the warm-up\n", r.SettleSeconds)
	fmt.Fprintf(w, "  steady window %.0fs: MemberCluster writes a minute %.2f; API writes a minute by resource:\n", r.SteadySeconds, r.MemberClusterWritesPerMinute)
	keys := make([]string, 0, len(r.APIWritesPerMinute))
	for k := range r.APIWritesPerMinute {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		fmt.Fprintf(w, "    (none)\n")
	}
	for _, k := range keys {
		fmt.Fprintf(w, "    %-40s %8.2f\n", k, r.APIWritesPerMinute[k])
	}
	q := func(name string, v *quantiles) {
		if v != nil {
			fmt.Fprintf(w, "  %s: p50 %.2fs, p90 %.2fs, p99 %.2fs, max %.2fs (%d)\n", name, v.P50, v.P90, v.P99, v.Max, v.Count)
		}
	}
	q("placement to Available", r.PlacementAvailableSeconds)
	printControllers(w, "joining", r.JoinControllers, r.JoinWrites)
	printControllers(w, "placing", r.PlaceControllers, r.PlaceWrites)
	if len(r.PlaceStages) > 0 {
		fmt.Fprintf(w, "  while placing, by stage in the hub (count; mean, p50, p99):\n")
		for _, t := range r.PlaceStages {
			fmt.Fprintf(w, "    %-28s %6d; %7.3fs, %7.3fs, %7.3fs\n", t.Name, t.Count, t.Mean, t.P50, t.P99)
		}
	}
	for _, t := range r.PlaceCycles {
		fmt.Fprintf(w, "  scheduling cycles while placing, %s: %d; mean %.4fs, p50 %.4fs, p99 %.4fs\n", t.Name, t.Count, t.Mean, t.P50, t.P99)
	}
	q("failover (killed member → PickN Available elsewhere)", r.FailoverSeconds)
	if z := r.ZoneLoss; z != nil {
		fmt.Fprintf(w, "  zone loss: %d members of zone %s lost and restored, %d placements preferring it (failback stabilization %ds, maxConcurrent %d)\n",
			z.Members, z.Zone, z.Placements, z.StabilizationSeconds, z.MaxConcurrent)
		q("  failover (zone lost → Available in another zone)", z.FailoverSeconds)
		q("  failback (zone restored → Available on it alone)", z.FailbackSeconds)
		moves := make([]string, 0, len(z.Moves))
		for n, c := range z.Moves {
			moves = append(moves, fmt.Sprintf("%d placements %s", c, n))
		}
		sort.Strings(moves)
		fmt.Fprintf(w, "    moves per placement: %s (max %d); failover hops: %d; ping-pong: %d; seen with no copy Available while failing back: %d\n",
			strings.Join(moves, ", "), z.MovesMax, z.FailoverHops, z.PingPong, z.NoCopyDuringFailback)
	}
	if r.ResyncSeconds != nil {
		fmt.Fprintf(w, "  hub restart → every member re-synced and every placement Available: %.1fs, %d Work sent again\n", *r.ResyncSeconds, *r.ResyncReapplies)
	}
	if c := r.Churn; c != nil {
		fmt.Fprintf(w, "  churn: %d cuts (%.1f a minute), %.1f MemberCluster writes a minute\n", c.Cuts, c.CutsPerMinute, c.MemberClusterWritesPerMinute)
	}
	if b := r.BadMembers; b != nil {
		fmt.Fprintf(w, "  bad members: %d of %d closed by the hub; other sessions dropped meanwhile: %d; %d of %d others still connected\n", b.Closed, b.Members, b.OthersDropped, b.OthersStillSynced, b.OthersInTheFleet)
	}
	if p := r.SteadyProfile; p != nil {
		fmt.Fprintf(w, "  end of the steady window: RSS %.0f MiB (%.1f KiB a member), heap in use %.0f MiB, stacks %.0f MiB, %d goroutines (%.2f a member); profiles in %s\n",
			float64(p.RSSBytes)/(1<<20), p.RSSPerMember/1024, float64(p.HeapInuseBytes)/(1<<20), float64(p.StackInuse)/(1<<20), p.Goroutines, p.GoroutinesPer, p.Dir)
	}
	fmt.Fprintf(w, "  load average (1 min) at start %s, at end %s\n", r.Load[0], r.Load[1])
	if r.Error != "" {
		fmt.Fprintf(w, "  the run failed (the figures above are those of the phases before): %s\n", r.Error)
	}
}

// printControllers prints a phase's API writes and its time by hub
// controller, the busiest first.
func printControllers(w io.Writer, phase string, controllers map[string]*controllerTimes, writes map[string]float64) {
	if len(controllers) == 0 {
		return
	}
	names := make([]string, 0, len(controllers))
	for n := range controllers {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := controllers[names[i]], controllers[names[j]]
		return a.WaitSeconds+a.WorkSeconds > b.WaitSeconds+b.WorkSeconds
	})
	fmt.Fprintf(w, "  while %s, API writes by resource: %v\n", phase, writes)
	fmt.Fprintf(w, "  while %s, by hub controller (items; mean wait in its queue, mean work):\n", phase)
	for _, n := range names {
		c := controllers[n]
		fmt.Fprintf(w, "    %-28s %6.0f; %7.3fs, %7.3fs\n", n, c.Items, c.MeanWaitSeconds, c.MeanWorkSeconds)
	}
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

// sim is one run.
type sim struct {
	o       options
	log     io.Writer
	c       client.Client
	kube    kubernetes.Interface
	hub     *hubProcess
	members []*member
	bad     []*member
	// zonePlacements are the placements that prefer lostZone (--zone-loss).
	zonePlacements map[string]bool
	tracker        *tracker
	dialSlot       chan struct{}
	caHash         string
	runCtx         context.Context
	runWG          sync.WaitGroup
	// phaseRSS is the hub's largest RSS in each phase.
	phaseRSS map[string]int64
}

// phasef is stepf for a phase whose largest hub RSS is reported under key.
func (s *sim) phasef(key, format string, args ...any) func() {
	s.hub.takePhaseRSS()
	done := s.stepf(format, args...)
	return func() {
		done()
		s.phaseRSS[key] = s.hub.takePhaseRSS()
	}
}

func (s *sim) stepf(format string, args ...any) func() {
	start := time.Now()
	fmt.Fprintf(s.log, "==> "+format+"\n", args...)
	return func() { fmt.Fprintf(s.log, "    done in %s\n", time.Since(start).Round(100*time.Millisecond)) }
}

func run(ctx context.Context, o options, log io.Writer) (partial *report, err error) {
	r := &report{Members: o.members, Placements: o.placements + o.zoneLoss, Load: [2]string{loadAverage(), ""}}
	root, err := toolchain.RepoRoot()
	if err != nil {
		return nil, err
	}
	dir := o.workDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "fleetsim-"); err != nil {
			return nil, err
		}
		defer func() {
			if err == nil {
				os.RemoveAll(dir)
			} else {
				fmt.Fprintf(log, "fleetsim: the hub's log is in %s\n", filepath.Join(dir, "hub.log"))
			}
		}()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := &sim{o: o, log: log, dialSlot: make(chan struct{}, o.dialWorkers), phaseRSS: map[string]int64{}}
	// A run that fails still reports what it measured up to the failure.
	defer func() {
		if err == nil || s.hub == nil {
			return
		}
		r.Error = err.Error()
		r.HubRSSBytes, r.HubCPUSeconds = s.hub.usage()
		r.HubCPUSeconds = round(r.HubCPUSeconds)
		r.HubRSSBytesByPhase = s.phaseRSS
		r.Load[1] = loadAverage()
		partial = r
	}()

	done := s.stepf("starting kube-apiserver and etcd")
	kube, err := toolchain.Find(root)
	if err != nil {
		return nil, err
	}
	env, err := testenv.Start(testenv.Options{BinaryAssetsDirectory: kube.Kube, CRDDirectory: filepath.Join(root, "manifests", "crds")})
	if err != nil {
		return nil, err
	}
	defer func() { _ = env.Stop() }()
	done()
	s.c = env.Client
	if s.kube, err = kubernetes.NewForConfig(env.Config); err != nil {
		return nil, err
	}
	if err := s.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hubNamespace}}); err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "hub.kubeconfig")
	if err := writeKubeconfig(env.Config, kubeconfig); err != nil {
		return nil, err
	}
	bin := o.hubBinary
	if bin == "" {
		done = s.stepf("building the hub")
		bin = filepath.Join(dir, "hub")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./hub")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build ./hub: %w\n%s", err, out)
		}
		done()
	}
	hubArgs := append([]string{
		// Every simulated member joins from 127.0.0.1: the per-address join
		// limit would pace them to 10 a minute.
		"--join-attempts-per-minute", "1000000",
		"--tunnel-max-connections", fmt.Sprint(o.members + o.badMembers + 64),
		// Failover in seconds rather than a minute, as the e2e suite does.
		"--default-toleration", "5s",
	}, o.hubArgs...)
	if o.profileDir != "" {
		pprof, err := freeAddress()
		if err != nil {
			return nil, err
		}
		hubArgs = append(hubArgs, "--pprof-bind-address", pprof)
	}
	s.hub, err = newHubProcess(bin, kubeconfig, filepath.Join(dir, "hub.log"), hubArgs)
	if err != nil {
		return nil, err
	}
	s.hub.env = o.hubEnv
	done = s.stepf("starting the hub (log: %s)", s.hub.logFile)
	if err := s.hub.start(ctx); err != nil {
		return nil, err
	}
	defer s.hub.stop()
	done()

	runCtx, cancelRun := context.WithCancel(ctx)
	s.runCtx = runCtx
	defer func() { cancelRun(); s.runWG.Wait() }()

	s.tracker, err = newTracker(runCtx, env)
	if err != nil {
		return nil, err
	}

	joinBefore, err := s.counters(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	done = s.phasef("join", "joining %d members (bootstrap tokens, join endpoint) and connecting them", o.members)
	if err := s.joinAll(ctx); err != nil {
		return nil, err
	}
	r.JoinSeconds = round(time.Since(start).Seconds())
	done()
	// The hub's controllers finish with the joins (labels, finalizers, taints)
	// before the placements start, so that placing is timed alone.
	done = s.phasef("joinSettle", "waiting until the hub's work queues are empty")
	if r.JoinSettleSeconds, err = s.hub.settle(ctx, o.settleTimeout); err != nil {
		return nil, err
	}
	joinAfter, err := s.counters(ctx)
	if err != nil {
		return nil, err
	}
	r.JoinControllers, r.JoinWrites = joinAfter.since(joinBefore)
	done()

	done = s.phasef("place", "placing %d placements", o.placements+o.zoneLoss)
	placeBefore, err := s.counters(ctx)
	if err != nil {
		return nil, err
	}
	stagesBefore, err := stages.Read(ctx, s.hub.metrics)
	if err != nil {
		return nil, err
	}
	cyclesBefore, err := stages.ReadHistograms(ctx, s.hub.metrics, cycleMetric, "type")
	if err != nil {
		return nil, err
	}
	if err := s.place(ctx); err != nil {
		return nil, err
	}
	if err := s.tracker.waitAvailable(ctx, o.settleTimeout, nil); err != nil {
		return nil, err
	}
	r.PlacementAvailableSeconds = quantilesOf(s.tracker.availableDurations())
	placeAfter, err := s.counters(ctx)
	if err != nil {
		return nil, err
	}
	r.PlaceControllers, r.PlaceWrites = placeAfter.since(placeBefore)
	stagesAfter, err := stages.Read(ctx, s.hub.metrics)
	if err != nil {
		return nil, err
	}
	r.PlaceStages = stagesAfter.Since(stagesBefore)
	cyclesAfter, err := stages.ReadHistograms(ctx, s.hub.metrics, cycleMetric, "type")
	if err != nil {
		return nil, err
	}
	r.PlaceCycles = cyclesAfter.Since(cyclesBefore)
	r.Bindings = s.tracker.bindings()
	done()

	done = s.phasef("settle", "warming up for %s, then until the hub's work queues are empty", o.warmup)
	if err := sleep(ctx, o.warmup); err != nil {
		return nil, err
	}
	if r.SettleSeconds, err = s.hub.settle(ctx, o.settleTimeout); err != nil {
		return nil, err
	}
	done()
	done = s.phasef("steady", "steady window of %s: counting API writes", o.duration)
	rc := s.kube.Discovery().RESTClient()
	before, err := writeCounts(ctx, rc)
	if err != nil {
		return nil, err
	}
	_, cpu0 := s.hub.usage()
	t0 := time.Now()
	if err := sleep(ctx, o.duration); err != nil {
		return nil, err
	}
	after, err := writeCounts(ctx, rc)
	if err != nil {
		return nil, err
	}
	_, cpu1 := s.hub.usage()
	minutes := time.Since(t0).Minutes()
	r.SteadySeconds = round(time.Since(t0).Seconds())
	r.APIWritesPerMinute, r.MemberClusterWritesPerMinute = perMinute(before, after, minutes)
	r.HubCPUSecondsPerMinuteSteady = round((cpu1 - cpu0) / minutes)
	if o.profileDir != "" {
		if r.SteadyProfile, err = s.hub.takeProfiles(ctx, o.profileDir, o.members); err != nil {
			return nil, err
		}
	}
	done()

	if o.badMembers > 0 {
		done = s.phasef("badMembers", "connecting %d bad members", o.badMembers)
		if r.BadMembers, err = s.badPhase(ctx); err != nil {
			return nil, err
		}
		done()
	}
	if o.churn > 0 {
		done = s.phasef("churn", "churn: %.1f cuts a minute for %s", o.churn, o.churnWindow)
		if r.Churn, err = s.churnPhase(ctx, rc); err != nil {
			return nil, err
		}
		done()
	}
	if o.kill > 0 {
		done = s.phasef("kill", "killing %d members that hold PickN placements", o.kill)
		if r.FailoverSeconds, err = s.killPhase(ctx); err != nil {
			return nil, err
		}
		done()
	}
	if o.zoneLoss > 0 {
		done = s.phasef("zoneLoss", "losing zone %s, then restoring it", lostZone)
		if r.ZoneLoss, err = s.zoneLossPhase(ctx); err != nil {
			return nil, err
		}
		done()
	}
	if o.restart {
		done = s.phasef("restart", "restarting the hub")
		secs, reapplies, err := s.restartPhase(ctx)
		if err != nil {
			return nil, err
		}
		r.ResyncSeconds, r.ResyncReapplies = &secs, &reapplies
		done()
	}
	r.HubRSSBytes, r.HubCPUSeconds = s.hub.usage()
	r.HubRSSBytesByPhase = s.phaseRSS
	r.HubCPUSeconds = round(r.HubCPUSeconds)
	r.Load[1] = loadAverage()
	return r, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// perMinute turns two readings of write counts into writes a minute by
// resource (zeros left out) and the MemberCluster writes among them.
func perMinute(before, after map[string]float64, minutes float64) (map[string]float64, float64) {
	out := map[string]float64{}
	mc := 0.0
	for k, v := range after {
		d := v - before[k]
		if d <= 0 {
			continue
		}
		out[k] = round(d / minutes)
		if k == "memberclusters" || strings.HasPrefix(k, "memberclusters/") {
			mc += d / minutes
		}
	}
	return out, round(mc)
}

func memberName(prefix string, i int) string { return fmt.Sprintf("%s-%05d", prefix, i) }

// joinAll joins every member (and bad member), then connects the good ones
// and waits until the hub records every one connected and healthy.
func (s *sim) joinAll(ctx context.Context) error {
	info := &corev1.ConfigMap{}
	if err := s.c.Get(ctx, types.NamespacedName{Namespace: hubNamespace, Name: tunnelserver.InfoConfigMapName}, info); err != nil {
		return fmt.Errorf("the hub published no join information: %w", err)
	}
	caHash := info.Data[tunnelserver.InfoKeyCAHash]
	s.caHash = caHash
	for i := range s.o.members {
		s.members = append(s.members, &member{name: memberName("sim", i), works: map[string]string{}, labels: map[string]string{
			labelZone: fmt.Sprintf("z%d", i%s.o.zones), labelGroup: fmt.Sprintf("g%d", i/s.o.groupSize)}})
	}
	for i := range s.o.badMembers {
		s.bad = append(s.bad, &member{name: memberName("bad", i), bad: true, works: map[string]string{},
			labels: map[string]string{labelZone: "bad", labelGroup: "bad"}})
	}
	if err := s.joinMembers(ctx, caHash, s.members); err != nil {
		return err
	}
	for _, m := range s.members {
		s.runWG.Add(1)
		go func() { defer s.runWG.Done(); m.run(s.runCtx, s.hub.tunnel, s.dialSlot) }()
	}
	deadline := time.Now().Add(s.o.settleTimeout)
	for {
		ready, err := s.readyMembers(ctx)
		if err != nil {
			return err
		}
		if ready == len(s.members) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d members are connected and healthy after %s", ready, len(s.members), s.o.settleTimeout)
		}
		if err := sleep(ctx, 2*time.Second); err != nil {
			return err
		}
	}
}

// joinMembers joins members, --join-workers at once.
func (s *sim) joinMembers(ctx context.Context, caHash string, all []*member) error {
	jobs := make(chan *member)
	errs := make(chan error, len(all))
	var wg sync.WaitGroup
	var joined atomic.Int64
	for range s.o.joinWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range jobs {
				token, _, err := join.CreateToken(ctx, s.c, hubNamespace, join.TokenOptions{TTL: 24 * time.Hour, Name: m.name})
				if err == nil {
					err = m.join(ctx, s.hub.tunnel, caHash, token)
				}
				if err != nil {
					errs <- err
					continue
				}
				if n := joined.Add(1); n%1000 == 0 {
					fmt.Fprintf(s.log, "    %d joined\n", n)
				}
			}
		}()
	}
	for _, m := range all {
		jobs <- m
	}
	close(jobs)
	wg.Wait()
	close(errs)
	return <-errs
}

// readyMembers counts the simulated members the hub records connected and
// healthy, from the watch's cache.
func (s *sim) readyMembers(ctx context.Context) (int, error) {
	list := &clusterv1beta1.MemberClusterList{}
	if err := s.tracker.cache.List(ctx, list, client.HasLabels{labelGroup}, client.UnsafeDisableDeepCopy); err != nil {
		return 0, err
	}
	n := 0
	for i := range list.Items {
		c := list.Items[i].Status.Conditions
		if strings.HasPrefix(list.Items[i].Name, "sim-") && conditions.IsTrue(c, clusterv1beta1.ConditionAgentConnected) && conditions.IsTrue(c, clusterv1beta1.ConditionHealthy) {
			n++
		}
	}
	return n, nil
}

// place creates, for each placement, a namespace with a ConfigMap and a
// ClusterResourcePlacement of that namespace: --placements of them, even ones
// PickAll with a group affinity, odd ones PickN spread over the zones; then
// --zone-loss PickN placements of one cluster that prefer lostZone and fail
// back to it.
func (s *sim) place(ctx context.Context) error {
	groups := (s.o.members + s.o.groupSize - 1) / s.o.groupSize
	maxSkew := int32(1)
	for i := range s.o.placements {
		policy := &placementv1beta1.PlacementPolicy{}
		if i%2 == 0 {
			policy.PlacementType = placementv1beta1.PickAll
			policy.Affinity = &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelGroup: fmt.Sprintf("g%d", (i/2)%groups)}},
				}}}}}
		} else {
			n := int32(s.o.pickN)
			policy.PlacementType = placementv1beta1.PickN
			policy.NumberOfClusters = &n
			policy.TopologySpreadConstraints = []placementv1beta1.TopologySpreadConstraint{{TopologyKey: labelZone, MaxSkew: &maxSkew, WhenUnsatisfiable: placementv1beta1.DoNotSchedule}}
		}
		if err := s.createPlacement(ctx, fmt.Sprintf("sim-%04d", i), policy); err != nil {
			return err
		}
	}
	s.zonePlacements = map[string]bool{}
	stabilization, maxConcurrent := int32(s.o.failbackStabilization.Seconds()), int32(s.o.failbackMaxConcurrent)
	for i := range s.o.zoneLoss {
		one := int32(1)
		name := fmt.Sprintf("zone-%04d", i)
		s.zonePlacements[name] = true
		if err := s.createPlacement(ctx, name, &placementv1beta1.PlacementPolicy{
			PlacementType:    placementv1beta1.PickN,
			NumberOfClusters: &one,
			ClusterPreferences: []placementv1beta1.ClusterPreference{
				{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{labelZone: lostZone}}},
				{LabelSelector: metav1.LabelSelector{}}, // any other zone
			},
			Failback: &placementv1beta1.FailbackPolicy{StabilizationSeconds: &stabilization, MaxConcurrent: &maxConcurrent},
		}); err != nil {
			return err
		}
	}
	return nil
}

// createPlacement creates a namespace name with a ConfigMap, and a
// ClusterResourcePlacement name of that namespace with policy.
func (s *sim) createPlacement(ctx context.Context, name string, policy *placementv1beta1.PlacementPolicy) error {
	if err := s.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		return err
	}
	if err := s.c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "settings"}, Data: map[string]string{"placement": name}}); err != nil {
		return err
	}
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Group: "", Version: "v1", Kind: "Namespace", Name: name}},
			Policy:            policy,
		},
	}
	pickN := 0
	if policy.PlacementType == placementv1beta1.PickN {
		pickN = int(*policy.NumberOfClusters)
	}
	s.tracker.created(name, pickN)
	return s.c.Create(ctx, crp)
}

// badPhase connects the bad members and waits until the hub closed each one;
// the good members must not lose a session meanwhile.
func (s *sim) badPhase(ctx context.Context) (*badReport, error) {
	// Bad members join only now: joined and not yet connected, they would
	// be candidates for the placements.
	if err := s.joinMembers(ctx, s.caHash, s.bad); err != nil {
		return nil, err
	}
	dropsBefore := s.drops()
	start := time.Now()
	for _, m := range s.bad {
		s.runWG.Add(1)
		go func() { defer s.runWG.Done(); m.run(s.runCtx, s.hub.tunnel, s.dialSlot) }()
	}
	deadline := time.Now().Add(2 * time.Minute)
	closed := 0
	for time.Now().Before(deadline) {
		closed = 0
		for _, m := range s.bad {
			if m.closedByHub.Load() {
				closed++
			}
		}
		if closed == len(s.bad) {
			break
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return nil, err
		}
	}
	took := time.Since(start)
	// Let whatever the bad sessions could disturb show.
	if err := sleep(ctx, 5*time.Second); err != nil {
		return nil, err
	}
	connected := 0
	for _, m := range s.members {
		m.mu.Lock()
		if m.sess != nil {
			connected++
		}
		m.mu.Unlock()
	}
	return &badReport{Members: len(s.bad), Closed: closed, OthersDropped: s.drops() - dropsBefore,
		OthersStillSynced: connected, OthersInTheFleet: len(s.members), SecondsUntilClosed: round(took.Seconds())}, nil
}

func (s *sim) drops() int64 {
	var n int64
	for _, m := range s.members {
		n += m.drops.Load()
	}
	return n
}
