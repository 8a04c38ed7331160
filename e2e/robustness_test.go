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
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
)

// drainTaint is the user NoExecute taint the robustness tests set.
const drainTaint = "e2e.flotilla.io/drain"

// preferring returns a PickN=1 policy that prefers member and tolerates tols.
func preferring(member string, tols ...placementv1beta1.Toleration) *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{
		PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1),
		Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []placementv1beta1.PreferredClusterSelector{{Weight: 100,
				Preference: placementv1beta1.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{clusterv1beta1.LabelClusterName: member}}}}},
		}},
		Tolerations: tols,
	}
}

// setUserTaint adds (or, with add false, removes) the drain taint on member.
func setUserTaint(ctx context.Context, hub client.Client, member string, add bool) error {
	mc := &clusterv1beta1.MemberCluster{}
	if err := hub.Get(ctx, types.NamespacedName{Name: member}, mc); err != nil {
		return err
	}
	base := mc.DeepCopy()
	var taints []clusterv1beta1.Taint
	for _, t := range mc.Spec.Taints {
		if t.Key != drainTaint {
			taints = append(taints, t)
		}
	}
	if add {
		taints = append(taints, clusterv1beta1.Taint{Key: drainTaint, Effect: clusterv1beta1.TaintEffectNoExecute})
	}
	mc.Spec.Taints = taints
	return hub.Patch(ctx, mc, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}

// A user's NoExecute taint (no timeAdded) gets its time recorded by the hub;
// a placement tolerating it for 10s leaves the cluster about 10s after that,
// and one without a toleration leaves after the hub's default (5s here).
// Before the hub recorded timeAdded, neither ever left.
func TestUserNoExecuteTaintEvictsAfterItsToleration(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	const member = "member-1"
	appNamespace(t, hub, "e2e-taint-10s")
	appNamespace(t, hub, "e2e-taint-none")
	placeNamespace(t, hub, "e2e-taint-10s", "e2e-taint-10s", preferring(member, placementv1beta1.Toleration{
		Key: drainTaint, Operator: placementv1beta1.TolerationOpExists, Effect: clusterv1beta1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](10)}))
	placeNamespace(t, hub, "e2e-taint-none", "e2e-taint-none", preferring(member))
	framework.Eventually(t, 3*time.Minute, framework.PlacementConditionsTrue(ctx, hub, "e2e-taint-10s", member))
	framework.Eventually(t, 3*time.Minute, framework.PlacementConditionsTrue(ctx, hub, "e2e-taint-none", member))

	framework.Eventually(t, 30*time.Second, func() error { return setUserTaint(ctx, hub, member, true) })
	t.Cleanup(func() {
		framework.Eventually(t, 30*time.Second, func() error { return setUserTaint(ctx, hub, member, false) })
	})
	var added time.Time
	framework.Eventually(t, 30*time.Second, func() error {
		mc := &clusterv1beta1.MemberCluster{}
		if err := hub.Get(ctx, types.NamespacedName{Name: member}, mc); err != nil {
			return err
		}
		for _, taint := range mc.Spec.Taints {
			if taint.Key == drainTaint && taint.TimeAdded != nil {
				added = taint.TimeAdded.Time
				return nil
			}
		}
		return fmt.Errorf("the hub has not recorded when it saw taint %s on %s: %+v", drainTaint, member, mc.Spec.Taints)
	})
	t.Logf("the hub recorded taint %s at %s", drainTaint, added.Format(time.RFC3339))

	leaves := func(name string) func() error {
		return func() error {
			got, err := clustersOf(ctx, hub, name)
			if err != nil {
				return err
			}
			for _, c := range got {
				if c == member {
					return fmt.Errorf("placement %s is still on %s", name, member)
				}
			}
			return nil
		}
	}
	// No toleration: the hub's default of 5s, plus a rollout.
	framework.Eventually(t, 45*time.Second, leaves("e2e-taint-none"))
	t.Logf("the untolerating placement left %s %s after timeAdded", member, time.Since(added).Round(time.Second))

	// Tolerated for 10s: still there before then (the taint's time is at
	// whole seconds, so leave a second of slack) ...
	if wait := time.Until(added.Add(8 * time.Second)); wait > 0 {
		framework.Consistently(t, wait, func() error {
			if leaves("e2e-taint-10s")() == nil {
				return fmt.Errorf("the placement tolerating the taint for 10s left after %s", time.Since(added).Round(time.Second))
			}
			return nil
		})
	}
	// ... and gone soon after.
	framework.Eventually(t, 45*time.Second, leaves("e2e-taint-10s"))
	left := time.Since(added)
	t.Logf("the placement tolerating the taint for 10s left %s %s after timeAdded", member, left.Round(time.Second))
	if left < 10*time.Second {
		t.Errorf("the placement left after %s, before its 10s toleration ran out", left)
	}
}

// hubRSS returns the resident memory of the hub process, from /proc.
func hubRSS(t *testing.T) int64 {
	t.Helper()
	st, err := provider.State()
	if err != nil {
		t.Fatal(err)
	}
	p, ok := st.Processes["hub"]
	if !ok || p.PID <= 0 {
		t.Skip("the hub does not run as a local process here")
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID))
	if err != nil {
		t.Fatalf("read the hub's memory: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("parse %q: %v", line, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", p.PID)
	return 0
}

// A placement asking for 2147483647 clusters is refused at admission, for a
// ClusterResourcePlacement and a ResourcePlacement alike. One at the bound
// (10000) is admitted, gets one status entry for the clusters it lacks, does
// not grow the hub's memory, and the next placement is available as quickly as
// usual. (Before, such a placement took the hub from 61 MiB to 9.8 GiB.)
func TestHugePickNIsRefusedAndTheBoundDoesNotGrowTheHub(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	appNamespace(t, hub, "e2e-huge")
	selectNS := []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "e2e-huge"}}
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-huge-refused"},
		Spec: placementv1beta1.PlacementSpec{ResourceSelectors: selectNS,
			Policy: &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](math.MaxInt32)}},
	}
	if err := hub.Create(ctx, crp); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "numberOfClusters") {
		_ = hub.Delete(ctx, crp)
		t.Fatalf("create a ClusterResourcePlacement for 2147483647 clusters: got %v, want refused for numberOfClusters", err)
	}
	rp := &placementv1beta1.ResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Namespace: "e2e-huge", Name: "huge"},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: "settings"}},
			Policy:            &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](math.MaxInt32)}},
	}
	if err := hub.Create(ctx, rp); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "numberOfClusters") {
		_ = hub.Delete(ctx, rp)
		t.Fatalf("create a ResourcePlacement for 2147483647 clusters: got %v, want refused for numberOfClusters", err)
	}

	before := hubRSS(t)
	placeNamespace(t, hub, "e2e-huge", "e2e-huge", &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](10000)})
	framework.Eventually(t, 2*time.Minute, func() error {
		got := &placementv1beta1.ClusterResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Name: "e2e-huge"}, got); err != nil {
			return err
		}
		var unfilled []placementv1beta1.PerClusterPlacementStatus
		placed := 0
		for _, pcs := range got.Status.PlacementStatuses {
			if pcs.ClusterName == "" {
				unfilled = append(unfilled, pcs)
			} else {
				placed++
			}
		}
		if placed != 3 || len(unfilled) != 1 {
			return fmt.Errorf("placement e2e-huge is on %d clusters with %d entries for the rest, want 3 and 1", placed, len(unfilled))
		}
		if c := findCond(unfilled[0].Conditions, placementv1beta1.ConditionScheduled); c == nil || !strings.Contains(c.Message, "9997 of 10000 clusters could not be selected") {
			return fmt.Errorf("the unfilled entry's Scheduled condition is %+v", c)
		}
		return nil
	})
	after := hubRSS(t)
	t.Logf("hub RSS %d MiB before the 10000-cluster placement, %d MiB after", before>>20, after>>20)
	if grown := after - before; grown > 64<<20 {
		t.Errorf("the hub's RSS grew by %d MiB for one placement", grown>>20)
	}

	appNamespace(t, hub, "e2e-huge-next")
	start := time.Now()
	placeNamespace(t, hub, "e2e-huge-next", "e2e-huge-next", &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](1)})
	onlyCluster(t, hub, "e2e-huge-next")
	took := time.Since(start)
	t.Logf("the next placement was available in %s", took.Round(100*time.Millisecond))
	if took > time.Minute {
		t.Errorf("the next placement took %s to be available", took)
	}
}

func findCond(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}
