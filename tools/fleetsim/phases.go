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
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// tracker follows every placement through a watch (no polling of the API
// server): when it was created, when it became Available, where it is.
type tracker struct {
	// cache also holds the MemberClusters (watched: at 10 000 members a LIST
	// every poll is more than the API server answers in time) and the
	// ClusterResourceBindings (moves are counted as they are created).
	cache ctrlcache.Cache

	mu          sync.Mutex
	createdAt   map[string]time.Time
	availableAt map[string]time.Time
	state       map[string]placementState
	// want is how many clusters each PickN placement picks (PickAll
	// placements are not in it).
	want map[string]int
	// Failover (kill and zone-loss phases): the members lost at lostAt, the
	// PickN placements they held, and when each was Available without them.
	lost         map[string]bool
	lostAt       time.Time
	affected     map[string]bool
	failedOverAt map[string]time.Time
	// Failback (zone-loss phase): when the lost members were restored, when
	// each affected placement was Available on them alone again, and which
	// were seen Available on no cluster in between.
	restoredAt   time.Time
	failedBackAt map[string]time.Time
	gap          map[string]bool
	// moves are the bindings created for each affected placement since
	// startFailover.
	moves map[string][]move
}

// move is a binding created for a placement: a cluster it was bound to.
type move struct {
	at      time.Time
	cluster string
}

type placementState struct {
	available bool
	// settled is available, or Available Unknown only because members' agents
	// are disconnected (a PickAll placement on a killed member: its other
	// members are Available, the killed ones are unknown, as they should be).
	settled  bool
	clusters []string
	// availableOn counts the clusters whose per-cluster Available is True.
	availableOn int
}

func newTracker(ctx context.Context, env *testenv.Env) (*tracker, error) {
	t := &tracker{createdAt: map[string]time.Time{}, want: map[string]int{}, availableAt: map[string]time.Time{},
		state: map[string]placementState{}, affected: map[string]bool{}, failedOverAt: map[string]time.Time{},
		failedBackAt: map[string]time.Time{}, gap: map[string]bool{}, moves: map[string][]move{}}
	c, err := ctrlcache.New(env.Config, ctrlcache.Options{Scheme: env.Scheme})
	if err != nil {
		return nil, err
	}
	inf, err := c.GetInformer(ctx, &placementv1beta1.ClusterResourcePlacement{})
	if err != nil {
		return nil, err
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    t.observe,
		UpdateFunc: func(_, n any) { t.observe(n) },
	}); err != nil {
		return nil, err
	}
	binf, err := c.GetInformer(ctx, &placementv1beta1.ClusterResourceBinding{})
	if err != nil {
		return nil, err
	}
	// Only additions: a relist reports the bindings it knows as updates.
	if _, err := binf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: t.bound}); err != nil {
		return nil, err
	}
	if _, err := c.GetInformer(ctx, &clusterv1beta1.MemberCluster{}); err != nil {
		return nil, err
	}
	t.cache = c
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the placement watch did not sync")
	}
	return t, nil
}

// created records a placement being created; pickN is how many clusters it
// picks, 0 for a PickAll placement.
func (t *tracker) created(name string, pickN int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.createdAt[name] = time.Now()
	if pickN > 0 {
		t.want[name] = pickN
	}
}

func (t *tracker) observe(obj any) {
	crp, ok := obj.(*placementv1beta1.ClusterResourcePlacement)
	if !ok {
		return
	}
	now := time.Now()
	c := conditions.Get(crp.Status.Conditions, crp.PlacementConditionType(placementv1beta1.ConditionAvailable))
	st := placementState{available: c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == crp.Generation}
	st.settled = st.available || (c != nil && c.Status == metav1.ConditionUnknown && c.Reason == placementv1beta1.ReasonAgentDisconnected && c.ObservedGeneration == crp.Generation)
	for _, ps := range crp.Status.PlacementStatuses {
		if ps.ClusterName != "" {
			st.clusters = append(st.clusters, ps.ClusterName)
		}
		if conditions.IsTrue(ps.Conditions, placementv1beta1.ConditionAvailable) {
			st.availableOn++
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.state[crp.Name] = st
	if st.available {
		if _, ok := t.availableAt[crp.Name]; !ok {
			t.availableAt[crp.Name] = now
		}
	}
	t.checkFailover(crp.Name, now)
	t.checkFailback(crp.Name, now)
}

// bound records a binding created for an affected placement.
func (t *tracker) bound(obj any) {
	b, ok := obj.(*placementv1beta1.ClusterResourceBinding)
	if !ok {
		return
	}
	name := b.Labels[placementv1beta1.LabelPlacementName]
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.affected[name] {
		t.moves[name] = append(t.moves[name], move{at: time.Now(), cluster: b.Spec.TargetCluster})
	}
}

// onlyOn reports whether a placement is Available on as many clusters as it
// picks, every one of them in (in) or outside (!in) set. Called with mu held.
func (t *tracker) onlyOn(name string, set map[string]bool, in bool) bool {
	st := t.state[name]
	if !st.available || len(st.clusters) != t.want[name] {
		return false
	}
	for _, c := range st.clusters {
		if set[c] != in {
			return false
		}
	}
	return true
}

// checkFailover records when an affected placement is Available on as many
// clusters as it picks, none of them lost. Called with mu held.
func (t *tracker) checkFailover(name string, now time.Time) {
	if _, ok := t.failedOverAt[name]; ok || !t.affected[name] {
		return
	}
	if t.onlyOn(name, t.lost, false) {
		t.failedOverAt[name] = now
	}
}

// checkFailback records, once the lost members are restored, when an affected
// placement is Available on them alone again, and whether it was seen
// Available on no cluster before. Called with mu held.
func (t *tracker) checkFailback(name string, now time.Time) {
	if _, ok := t.failedBackAt[name]; ok || !t.affected[name] || t.restoredAt.IsZero() {
		return
	}
	if t.onlyOn(name, t.lost, true) {
		t.failedBackAt[name] = now
		return
	}
	if t.state[name].availableOn == 0 {
		t.gap[name] = true
	}
}

// startFailover records the members about to be lost and the PickN placements
// they hold (of only, when it is not nil), and starts counting those
// placements' moves. It returns how many placements are affected.
func (t *tracker) startFailover(lost map[string]bool, only map[string]bool) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lost, t.lostAt, t.restoredAt = lost, time.Now(), time.Time{}
	t.affected, t.failedOverAt = map[string]bool{}, map[string]time.Time{}
	t.failedBackAt, t.gap, t.moves = map[string]time.Time{}, map[string]bool{}, map[string][]move{}
	for name, st := range t.state {
		if t.want[name] == 0 || (only != nil && !only[name]) {
			continue
		}
		for _, c := range st.clusters {
			if lost[c] {
				t.affected[name] = true
			}
		}
	}
	return len(t.affected)
}

// startFailback records that the lost members are being restored.
func (t *tracker) startFailback() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.restoredAt = time.Now()
}

// pickNHolders returns the members holding PickN placements.
func (t *tracker) pickNHolders() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	seen := map[string]bool{}
	for name, st := range t.state {
		if t.want[name] > 0 {
			for _, c := range st.clusters {
				seen[c] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// waitFailover waits until every affected placement failed over.
func (t *tracker) waitFailover(ctx context.Context, timeout time.Duration) ([]time.Duration, error) {
	return t.waitAffected(ctx, timeout, "failed over", func() (map[string]time.Time, time.Time) { return t.failedOverAt, t.lostAt })
}

// waitFailback waits until every affected placement is back on the restored
// members.
func (t *tracker) waitFailback(ctx context.Context, timeout time.Duration) ([]time.Duration, error) {
	return t.waitAffected(ctx, timeout, "failed back", func() (map[string]time.Time, time.Time) { return t.failedBackAt, t.restoredAt })
}

// waitAffected waits until every affected placement has a time in the map
// times returns (under mu), and returns each one's time since the start.
func (t *tracker) waitAffected(ctx context.Context, timeout time.Duration, what string, times func() (map[string]time.Time, time.Time)) ([]time.Duration, error) {
	deadline := time.Now().Add(timeout)
	for {
		t.mu.Lock()
		at, start := times()
		var ds []time.Duration
		for name := range t.affected {
			if when, ok := at[name]; ok {
				ds = append(ds, when.Sub(start))
			}
		}
		n := len(t.affected)
		waiting := t.waiting(at)
		t.mu.Unlock()
		if len(ds) == n {
			return ds, nil
		}
		if time.Now().After(deadline) {
			return ds, fmt.Errorf("%d of %d placements of the lost members %s within %s; still waiting: %s", len(ds), n, what, timeout, waiting)
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// waiting describes the affected placements not in done: whether each is
// Available and the clusters it is on. Called with mu held.
func (t *tracker) waiting(done map[string]time.Time) string {
	var out []string
	for name := range t.affected {
		if _, ok := done[name]; ok {
			continue
		}
		st := t.state[name]
		out = append(out, fmt.Sprintf("%s (available %t, on %s)", name, st.available, strings.Join(st.clusters, ",")))
	}
	sort.Strings(out)
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("and %d more", len(out)-20))
	}
	return strings.Join(out, "; ")
}

// movesSinceFailover returns, for each affected placement, the bindings
// created for it since startFailover; hops counts the placements bound more
// than once before the restore (a failover onto a member that was lost too);
// pingPong those bound more than once after the restore, or again once back;
// gaps those seen Available on no cluster while failing back.
func (t *tracker) movesSinceFailover() (moves map[string]int, hops, pingPong, gaps int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	moves = map[string]int{}
	for name := range t.affected {
		ms := t.moves[name]
		moves[name] = len(ms)
		out := 0
		for _, m := range ms {
			if t.restoredAt.IsZero() || m.at.Before(t.restoredAt) {
				out++
			}
		}
		back, ok := t.failedBackAt[name]
		again := ok && slices.ContainsFunc(ms, func(m move) bool { return m.at.After(back) })
		if out > 1 {
			hops++
		}
		if len(ms)-out > 1 || again {
			pingPong++
		}
		if t.gap[name] {
			gaps++
		}
	}
	return moves, hops, pingPong, gaps
}

// waitAvailable waits until every placement created is Available.
func (t *tracker) waitAvailable(ctx context.Context, timeout time.Duration, extra func() (bool, string)) error {
	deadline := time.Now().Add(timeout)
	for {
		t.mu.Lock()
		missing := 0
		for name := range t.createdAt {
			if !t.state[name].settled {
				missing++
			}
		}
		total := len(t.createdAt)
		t.mu.Unlock()
		ok, why := true, ""
		if extra != nil {
			ok, why = extra()
		}
		if missing == 0 && ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d placements are not Available (nor Unknown only for disconnected agents) after %s %s", missing, total, timeout, why)
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

func (t *tracker) availableDurations() []time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]time.Duration, 0, len(t.availableAt))
	for name, at := range t.availableAt {
		if c, ok := t.createdAt[name]; ok {
			out = append(out, at.Sub(c))
		}
	}
	return out
}

func (t *tracker) bindings() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, st := range t.state {
		n += len(st.clusters)
	}
	return n
}

// churnPhase cuts random connected members (no goodbye) during the churn
// window, each dialling again 3s later, and counts the MemberCluster writes.
func (s *sim) churnPhase(ctx context.Context, rc rest.Interface) (*churnReport, error) {
	before, err := writeCounts(ctx, rc)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	every := time.Duration(float64(time.Minute) / s.o.churn)
	tick := time.NewTicker(every)
	defer tick.Stop()
	end := time.After(s.o.churnWindow)
	cuts := 0
loop:
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-end:
			break loop
		case <-tick.C:
		}
		m := s.members[rand.N(len(s.members))]
		m.mu.Lock()
		live := m.sess != nil
		m.mu.Unlock()
		if live && !m.lost.Load() {
			m.disconnect(3 * time.Second)
			cuts++
		}
	}
	// The last cut members reconnect; their writes belong to the churn.
	if err := sleep(ctx, 5*time.Second); err != nil {
		return nil, err
	}
	after, err := writeCounts(ctx, rc)
	if err != nil {
		return nil, err
	}
	minutes := time.Since(start).Minutes()
	_, mc := perMinute(before, after, minutes)
	return &churnReport{CutsPerMinute: round(float64(cuts) / minutes), Cuts: cuts, MemberClusterWritesPerMinute: mc}, nil
}

// killPhase kills --kill members that hold PickN placements and times those
// placements' failover.
func (s *sim) killPhase(ctx context.Context) (*quantiles, error) {
	holders := s.tracker.pickNHolders()
	rand.Shuffle(len(holders), func(i, j int) { holders[i], holders[j] = holders[j], holders[i] })
	byName := map[string]*member{}
	for _, m := range s.members {
		byName[m.name] = m
	}
	var killed []*member
	for _, h := range holders {
		if len(killed) == s.o.kill {
			break
		}
		if m := byName[h]; m != nil && !m.lost.Load() {
			killed = append(killed, m)
		}
	}
	if len(killed) < s.o.kill {
		fmt.Fprintf(s.log, "    only %d members hold PickN placements; killing those\n", len(killed))
	}
	ds, err := s.failover(ctx, killed, nil)
	return quantilesOf(ds), err
}

// failover loses members (for good unless restored later) and waits until
// the PickN placements they held (of only, when not nil) are Available on
// other members; it returns how long each took.
func (s *sim) failover(ctx context.Context, members []*member, only map[string]bool) ([]time.Duration, error) {
	lost := map[string]bool{}
	for _, m := range members {
		lost[m.name] = true
	}
	affected := s.tracker.startFailover(lost, only)
	fmt.Fprintf(s.log, "    %d members lost, %d PickN placements to fail over\n", len(members), affected)
	for _, m := range members {
		m.lose()
	}
	return s.tracker.waitFailover(ctx, s.o.settleTimeout)
}

// zoneLossPhase loses every member of the first zone, waits until the
// placements that prefer it are Available elsewhere, restores the zone and
// waits until they are back on it; then it watches for
// --failback-stabilization plus 10s more for a placement moving again.
func (s *sim) zoneLossPhase(ctx context.Context) (*zoneLossReport, error) {
	var zone []*member
	for _, m := range s.members {
		if m.labels[labelZone] == lostZone && !m.lost.Load() {
			zone = append(zone, m)
		}
	}
	r := &zoneLossReport{Zone: lostZone, Members: len(zone), StabilizationSeconds: int(s.o.failbackStabilization.Seconds()), MaxConcurrent: s.o.failbackMaxConcurrent}
	ds, err := s.failover(ctx, zone, s.zonePlacements)
	r.Placements = len(ds)
	r.FailoverSeconds = quantilesOf(ds)
	if err != nil {
		return r, err
	}
	fmt.Fprintf(s.log, "    failed over (p50 %.1fs, max %.1fs); restoring zone %s\n", r.FailoverSeconds.P50, r.FailoverSeconds.Max, lostZone)
	s.tracker.startFailback()
	for _, m := range zone {
		m.restore()
	}
	ds, err = s.tracker.waitFailback(ctx, s.o.settleTimeout)
	r.FailbackSeconds = quantilesOf(ds)
	if err != nil {
		return r, err
	}
	fmt.Fprintf(s.log, "    failed back (p50 %.1fs, max %.1fs); watching for moves\n", r.FailbackSeconds.P50, r.FailbackSeconds.Max)
	if err := sleep(ctx, s.o.failbackStabilization+10*time.Second); err != nil {
		return r, err
	}
	moves, hops, pingPong, gaps := s.tracker.movesSinceFailover()
	r.Moves = map[string]int{}
	for _, n := range moves {
		r.Moves[fmt.Sprint(n)]++
		r.MovesMax = max(r.MovesMax, n)
	}
	r.FailoverHops, r.PingPong, r.NoCopyDuringFailback = hops, pingPong, gaps
	return r, nil
}

// restartPhase restarts the hub and times the re-sync: every member that is
// not lost connected again and through its work sync, and every placement
// Available. It returns the seconds and the Work members were sent although
// they held it.
func (s *sim) restartPhase(ctx context.Context) (float64, int64, error) {
	reapplies := func() int64 {
		var n int64
		for _, m := range s.members {
			n += m.reapplies.Load()
		}
		return n
	}
	r0 := reapplies()
	s.hub.stop()
	// From the new hub process's start: its caches' sync of the fleet is
	// part of the re-sync.
	start := time.Now()
	if err := s.hub.start(ctx); err != nil {
		return 0, 0, err
	}
	err := s.tracker.waitAvailable(ctx, s.o.settleTimeout, func() (bool, string) {
		waiting := 0
		for _, m := range s.members {
			if !m.lost.Load() && !m.synced(start) {
				waiting++
			}
		}
		return waiting == 0, fmt.Sprintf("(%d members not re-synced)", waiting)
	})
	if err != nil {
		return 0, 0, err
	}
	return round(time.Since(start).Seconds()), reapplies() - r0, nil
}
