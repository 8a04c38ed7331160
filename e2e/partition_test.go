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

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/poll"
)

// pollEvery is how often the partition test reads every member.
const pollEvery = 200 * time.Millisecond

// copyState is what one poll sees of the Deployment on one member.
type copyState struct {
	exists bool
	// spec and pods are spec.replicas and status.replicas.
	spec, pods, available int32
}

// running is a copy that runs or is meant to: asked for replicas, or pods
// still there.
func (c copyState) running() bool { return c.exists && (c.spec > 0 || c.pods > 0) }

func observeCopy(ctx context.Context, c client.Client, key types.NamespacedName) (copyState, error) {
	d := &appsv1.Deployment{}
	switch err := c.Get(ctx, key, d); {
	case apierrors.IsNotFound(err):
		return copyState{}, nil
	case err != nil:
		return copyState{}, err
	}
	return copyState{exists: true, spec: ptr.Deref(d.Spec.Replicas, 1), pods: d.Status.Replicas, available: d.Status.AvailableReplicas}, nil
}

// partitionWatch polls the Deployment on every member every 200 ms and
// records the moments that matter.
type partitionWatch struct {
	// polls counts the polls that read every member.
	polls int
	// overlaps are the polls that saw a running copy on more than one member.
	overlaps []string
	// stopped is the first poll after which member-1's copy no longer ran
	// (replicas and pods 0, or gone).
	stopped time.Time
	// started is the first poll that saw a running copy on another member,
	// on which; available when it had every replica available there.
	started, available time.Time
	elsewhere          string
	// waiting is the first poll that saw the placement's Fencing condition
	// True (FencingWaiting), with its message.
	waiting        time.Time
	waitingMessage string
}

func (w *partitionWatch) poll(ctx context.Context, hub client.Client, members map[string]client.Client, key types.NamespacedName, placement string) error {
	now := time.Now()
	var running []string
	states := map[string]copyState{}
	for _, m := range allMembers {
		s, err := observeCopy(ctx, members[m], key)
		if err != nil {
			return err
		}
		states[m] = s
		if s.running() {
			running = append(running, m)
		}
	}
	w.polls++
	if len(running) > 1 {
		w.overlaps = append(w.overlaps, fmt.Sprintf("%s: %v", now.Format("15:04:05.000"), states))
	}
	if w.stopped.IsZero() && !states["member-1"].running() {
		w.stopped = now
	}
	for _, m := range running {
		if m == "member-1" {
			continue
		}
		if w.started.IsZero() {
			w.started, w.elsewhere = now, m
		}
		if s := states[m]; w.available.IsZero() && m == w.elsewhere && s.available == s.spec && s.spec > 0 {
			w.available = now
		}
	}
	if w.waiting.IsZero() {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Name: placement}, crp); err != nil {
			return err
		}
		c := conditions.Get(crp.Status.Conditions, placementv1beta1.ClusterResourcePlacementConditionType(placementv1beta1.ConditionFencing))
		if c != nil && c.Status == metav1.ConditionTrue && c.Reason == placementv1beta1.ReasonFencingWaiting {
			w.waiting, w.waitingMessage = now, c.Message
		}
	}
	return nil
}

// A fenced single-copy placement on member-1, whose link to the hub is cut at
// the tunnel balancer while its agent keeps running: the agent scales its
// copy to zero once the lease runs out, the copy on another member starts only
// after that — no poll sees two running copies — and when the link returns,
// the stale copy on member-1 is removed and nothing grows there again.
func TestAFencedPlacementNeverRunsTwoCopiesAcrossAPartition(t *testing.T) {
	if provider.OnKind() {
		t.Skip("the tunnel balancer that partitions a member runs on kwok fleets only")
	}
	ctx := context.Background()
	hub := hubClient(t)
	lb, err := provider.Balancer()
	if err != nil {
		t.Fatal(err)
	}
	const name = "e2e-partition"
	const lease = 10 * time.Second
	appNamespace(t, hub, name)
	placeNamespace(t, hub, name, name, &placementv1beta1.PlacementPolicy{
		PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1),
		ClusterPreferences: []placementv1beta1.ClusterPreference{
			{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{clusterv1beta1.LabelClusterName: "member-1"}}},
			{LabelSelector: metav1.LabelSelector{}},
		},
		Fencing: &placementv1beta1.FencingPolicy{LeaseSeconds: ptr.To(int32(lease / time.Second)), Action: placementv1beta1.FencingScaleToZero},
	})
	framework.Eventually(t, 3*time.Minute, framework.PlacementConditionsTrue(ctx, hub, name, "member-1"))
	members := map[string]client.Client{}
	for _, m := range allMembers {
		members[m] = memberClient(t, m)
	}
	key := types.NamespacedName{Namespace: name, Name: "web"}
	framework.Eventually(t, time.Minute, func() error {
		s, err := observeCopy(ctx, members["member-1"], key)
		if err != nil {
			return err
		}
		if !s.running() || s.available != s.spec {
			return fmt.Errorf("the copy on member-1 is %+v, want every replica available", s)
		}
		return nil
	})

	t.Cleanup(func() {
		if err := lb.Unblock(ctx, "member-1"); err != nil {
			t.Errorf("failed to unblock member-1: %v", err)
		}
		framework.Eventually(t, time.Minute, framework.MemberCondition(ctx, hub, "member-1", clusterv1beta1.ConditionAgentConnected, metav1.ConditionTrue))
	})
	cut := time.Now()
	n, err := lb.Block(ctx, "member-1")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("member-1 blocked at the balancer (%d connections reset); its agent keeps running", n)

	w := &partitionWatch{}
	poll.Eventually(t, 3*time.Minute, pollEvery, func() error {
		if err := w.poll(ctx, hub, members, key, name); err != nil {
			return err
		}
		if w.available.IsZero() {
			return fmt.Errorf("no copy Available elsewhere yet (member-1 stopped: %t)", !w.stopped.IsZero())
		}
		return nil
	})
	// A few more polls while the placement settles on the new member.
	poll.Consistently(t, 5*time.Second, pollEvery, func() error { return w.poll(ctx, hub, members, key, name) })

	t.Logf("cut → member-1's copy stopped by its agent: %s", w.stopped.Sub(cut).Round(100*time.Millisecond))
	t.Logf("cut → copy on %s first seen: %s; Available: %s", w.elsewhere, w.started.Sub(cut).Round(100*time.Millisecond), w.available.Sub(cut).Round(100*time.Millisecond))
	t.Logf("gap between the two copies: %s; %d polls, %d with two running copies", w.started.Sub(w.stopped).Round(100*time.Millisecond), w.polls, len(w.overlaps))
	if !w.waiting.IsZero() {
		t.Logf("the hub waited (FencingWaiting) from %s after the cut: %s", w.waiting.Sub(cut).Round(100*time.Millisecond), w.waitingMessage)
	}
	if len(w.overlaps) > 0 {
		t.Errorf("polls saw a running copy on two members:\n%s", strings.Join(w.overlaps, "\n"))
	}
	if w.stopped.IsZero() || !w.stopped.Before(w.started) {
		t.Errorf("the copy on %s started at %s, before member-1's stopped (%s)", w.elsewhere, w.started.Format(time.StampMilli), w.stopped.Format(time.StampMilli))
	}
	if got := w.stopped.Sub(cut); got > lease+6*time.Second {
		t.Errorf("member-1's agent stopped its copy %s after the cut, want within the lease of %s plus a heartbeat period", got, lease)
	}
	// Stopped by the agent, not removed: the Deployment is there with 0 replicas.
	if s, err := observeCopy(ctx, members["member-1"], key); err != nil || s.exists && s.spec != 0 {
		t.Errorf("member-1's copy while cut off = %+v, %v; want 0 replicas", s, err)
	}
	if err := agentLogged("member-1", "Cut off from the hub for longer than the fencing lease"); err != nil {
		t.Error(err)
	}

	// The link returns: the agent reconnects, the hub has it remove the
	// Work the placement left, and nothing grows on member-1 again.
	healed := time.Now()
	if err := lb.Unblock(ctx, "member-1"); err != nil {
		t.Fatal(err)
	}
	connected := framework.MemberCondition(ctx, hub, "member-1", clusterv1beta1.ConditionAgentConnected, metav1.ConditionTrue)
	poll.Eventually(t, time.Minute, pollEvery, func() error {
		if err := w.poll(ctx, hub, members, key, name); err != nil {
			return err
		}
		return connected()
	})
	t.Logf("unblock → member-1 connected: %s", time.Since(healed).Round(100*time.Millisecond))
	poll.Eventually(t, time.Minute, pollEvery, func() error {
		if err := w.poll(ctx, hub, members, key, name); err != nil {
			return err
		}
		if s, _ := observeCopy(ctx, members["member-1"], key); s.exists {
			return fmt.Errorf("member-1 still holds the stale copy: %+v", s)
		}
		return nil
	})
	t.Logf("unblock → stale copy removed from member-1: %s", time.Since(healed).Round(100*time.Millisecond))
	poll.Consistently(t, 10*time.Second, pollEvery, func() error {
		if err := w.poll(ctx, hub, members, key, name); err != nil {
			return err
		}
		if s, _ := observeCopy(ctx, members["member-1"], key); s.exists {
			return fmt.Errorf("the copy came back on member-1: %+v", s)
		}
		got, err := clustersOf(ctx, hub, name)
		if err != nil {
			return err
		}
		if len(got) != 1 || got[0] != w.elsewhere {
			return fmt.Errorf("the placement is on %v, want [%s]", got, w.elsewhere)
		}
		return nil
	})
	if len(w.overlaps) > 0 {
		t.Errorf("after the link returned, polls saw a running copy on two members:\n%s", strings.Join(w.overlaps, "\n"))
	}
}

// agentLogged checks that a member's agent logged a line containing text.
func agentLogged(member, text string) error {
	data, err := os.ReadFile(filepath.Join(provider.LogDir(), "agent-"+member+".log"))
	if err != nil {
		return err
	}
	if !strings.Contains(string(data), text) {
		return fmt.Errorf("the agent of %s did not log %q", member, text)
	}
	return nil
}
