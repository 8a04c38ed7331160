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
	pickN int
	// cache also holds the MemberClusters (watched: at 10 000 members a LIST
	// every poll is more than the API server answers in time).
	cache ctrlcache.Cache

	mu          sync.Mutex
	createdAt   map[string]time.Time
	isPickN     map[string]bool
	availableAt map[string]time.Time
	state       map[string]placementState
	// Failover: the members killed at killAt, the PickN placements they held,
	// and when each was Available without them.
	killed       map[string]bool
	killAt       time.Time
	affected     map[string]bool
	failedOverAt map[string]time.Time
}

type placementState struct {
	available bool
	// settled is available, or Available Unknown only because members' agents
	// are disconnected (a PickAll placement on a killed member: its other
	// members are Available, the killed ones are unknown, as they should be).
	settled  bool
	clusters []string
}

func newTracker(ctx context.Context, env *testenv.Env, pickN int) (*tracker, error) {
	t := &tracker{pickN: pickN, createdAt: map[string]time.Time{}, isPickN: map[string]bool{}, availableAt: map[string]time.Time{},
		state: map[string]placementState{}, affected: map[string]bool{}, failedOverAt: map[string]time.Time{}}
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

func (t *tracker) created(name string, pickN bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.createdAt[name], t.isPickN[name] = time.Now(), pickN
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
}

// checkFailover records when an affected placement is Available on pickN
// clusters none of which was killed. Called with mu held.
func (t *tracker) checkFailover(name string, now time.Time) {
	if !t.affected[name] {
		return
	}
	if _, ok := t.failedOverAt[name]; ok {
		return
	}
	st := t.state[name]
	if !st.available || len(st.clusters) != t.pickN {
		return
	}
	for _, c := range st.clusters {
		if t.killed[c] {
			return
		}
	}
	t.failedOverAt[name] = now
}

// startFailover records the members about to be killed and the PickN
// placements they hold.
func (t *tracker) startFailover(killed map[string]bool) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.killed, t.killAt = killed, time.Now()
	for name, st := range t.state {
		if !t.isPickN[name] {
			continue
		}
		for _, c := range st.clusters {
			if killed[c] {
				t.affected[name] = true
			}
		}
	}
	return len(t.affected)
}

// pickNHolders returns the members holding PickN placements.
func (t *tracker) pickNHolders() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	seen := map[string]bool{}
	for name, st := range t.state {
		if t.isPickN[name] {
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
	deadline := time.Now().Add(timeout)
	for {
		t.mu.Lock()
		var ds []time.Duration
		for name := range t.affected {
			if at, ok := t.failedOverAt[name]; ok {
				ds = append(ds, at.Sub(t.killAt))
			}
		}
		n := len(t.affected)
		waiting := t.waitingFailover()
		t.mu.Unlock()
		if len(ds) == n {
			return ds, nil
		}
		if time.Now().After(deadline) {
			return ds, fmt.Errorf("%d of %d placements of the killed members failed over within %s; still waiting: %s", len(ds), n, timeout, waiting)
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// waitingFailover describes the affected placements that have not failed over:
// whether each is Available and the clusters it is on. Called with mu held.
func (t *tracker) waitingFailover() string {
	var out []string
	for name := range t.affected {
		if _, ok := t.failedOverAt[name]; ok {
			continue
		}
		st := t.state[name]
		out = append(out, fmt.Sprintf("%s (available %t, on %s)", name, st.available, strings.Join(st.clusters, ",")))
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
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
		if live && !m.killed.Load() {
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
	killed := map[string]bool{}
	for _, h := range holders {
		if len(killed) == s.o.kill {
			break
		}
		if byName[h] != nil && strings.HasPrefix(h, "sim-") {
			killed[h] = true
		}
	}
	if len(killed) < s.o.kill {
		fmt.Fprintf(s.log, "    only %d members hold PickN placements; killing those\n", len(killed))
	}
	affected := s.tracker.startFailover(killed)
	fmt.Fprintf(s.log, "    %d PickN placements to fail over\n", affected)
	for name := range killed {
		byName[name].kill()
	}
	ds, err := s.tracker.waitFailover(ctx, s.o.settleTimeout)
	if err != nil {
		return quantilesOf(ds), err
	}
	return quantilesOf(ds), nil
}

// restartPhase restarts the hub and times the re-sync: every member that is
// not killed connected again and through its work sync, and every placement
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
			if !m.killed.Load() && !m.synced(start) {
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
