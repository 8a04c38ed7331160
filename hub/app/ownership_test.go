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

package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/pki"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// testUser is the field manager of this test's own writes: the user's, as
// kubectl's would be. A hub write without a field manager of its own would
// show up as the test binary's name, which is no writer in the table.
const testUser = "ownership-test-user"

// ownershipTimeout bounds each step of TestEveryWriterWritesOnlyItsFields.
const ownershipTimeout = 30 * time.Second

// patientRetry retries a conflicting update for as long as a loaded machine
// needs: the hub's controllers write the same objects all the while, and
// client-go's DefaultRetry (five tries 10 ms apart) lost to them.
var patientRetry = wait.Backoff{Steps: 25, Duration: 20 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Cap: time.Second}

// Every row of the ownership table (hub/pipeline/ownership.go) is written by
// its real writer while the hub, run in-process with all its controllers,
// carries placements of both scopes through their lives: members join and
// connect, placements roll out (one by a staged update run), overrides are
// snapshotted, a rebalance is asked for, old snapshots go beyond the history
// limit, a member of a lost hub replica is swept, a NoExecute taint evicts,
// a deleted placement's Work is released by its agent or by the work-cleanup
// timeout, a member renews its certificate, overrides are deleted, a member
// leaves and one's API server turns unhealthy (Stalled). Every version of every
// object the test makes is checked as it happens: each manager owns only
// fields its rows give it, every deletion comes from a writer with a delete
// row for the kind, and every hub row of the table was exercised at least
// once (so that a writer added later cannot go unchecked).
//
// The join and tunnel servers are the hub's real ones, reached over TLS on
// their port; the agents' side of those protocols is played by the test over
// the real wire (wireAgent). A real agent (agent/join, agent/session with
// agent/apply) is not run: it keeps its identity in, and applies into, a
// member cluster, and agent/join refuses to join the hub's own cluster (or,
// with HubAsMember, joins it labelled and tainted as the hub, which changes
// the placements) — it would need a second API server per member in this
// package, and the hub's writers would see nothing more: the agent's effects
// on the hub are exactly the join, tunnel and leave messages played here.
//
// Deletions carry no field manager: the recorder tells the deleter by the
// hub package on the request's stack. A field a writer clears leaves no owner:
// the two such rows (the sweeper's agentSession, the tunnel server's
// previousCertificateSerial) count as exercised once the test saw the field
// cleared. One row is exempt, and says why where it is exempted.
//
// Two member writes are the test's, as the user: it creates a MemberCluster
// without a join (as a user may; membership then writes its status first), and
// it writes that member's status to name a session on a hub replica that no
// longer exists — standing in for a replica that died, which one process
// cannot be — so that the leader's sweeper records it as lost.
func TestEveryWriterWritesOnlyItsFields(t *testing.T) {
	ctx := context.Background()
	user := userClient(t)
	rec := newOwnershipRecorder(func(namespace, name string) bool {
		return strings.HasPrefix(name, "own") || strings.HasPrefix(namespace, "own") || strings.HasPrefix(namespace, clusterv1beta1.MemberNamespace("own"))
	}, func(m string) bool { return m == testUser })
	rec.watch(t, env.Config)
	addr := freeAddress(t)
	startRecordedHub(t, rec, addr)

	// Members: three join and connect (own-b's first heartbeat comes late,
	// so that its connection is recorded before its health); one is created
	// by the user and its status names a session of a replica that is gone.
	var agents []*wireAgent
	fleet := map[string]string{"suite": "ownership"}
	for _, name := range []string{"own-a", "own-b", "own-c"} {
		a := joinWire(t, addr, name, fleet)
		a.lateHeartbeat = name == "own-b"
		a.connect(t)
		agents = append(agents, a)
	}
	agentA, agentC := agents[0], agents[2]
	testenv.Create(t, user, &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "own-swept", Labels: map[string]string{"suite": "ownership-swept"}}})
	testenv.Eventually(t, ownershipTimeout, func() error {
		return retry.RetryOnConflict(patientRetry, func() error {
			mc := &clusterv1beta1.MemberCluster{}
			if err := user.Get(ctx, types.NamespacedName{Name: "own-swept"}, mc); err != nil {
				return err
			}
			if conditions.Get(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected) == nil {
				return errors.New("membership has not written own-swept's status yet")
			}
			mc.Status.AgentSession = &clusterv1beta1.AgentSession{HubReplica: "own-lost-replica", Generation: 1, ConnectedSince: ptr.To(metav1.Now())}
			conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected, metav1.ConditionTrue, clusterv1beta1.ReasonAgentConnected, "connected to own-lost-replica", mc.Generation)
			return user.Status().Update(ctx, mc)
		})
	})
	for _, a := range agents {
		waitMember(t, user, a.name, func(mc *clusterv1beta1.MemberCluster) error {
			if !conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected) || !conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionHealthy) {
				return fmt.Errorf("not connected and healthy: %+v", mc.Status.Conditions)
			}
			return nil
		})
	}

	// What is placed, and the overrides of it.
	for _, ns := range []string{"own", "own-ext", "own-rp", unavailablePlacement} {
		testenv.Create(t, user, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"team": "own"}}})
		testenv.Create(t, user, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"k": "v"}})
	}
	addLabel := []placementv1beta1.JSONPatchOverride{{Operator: placementv1beta1.JSONPatchOverrideOpAdd, Path: "/metadata/labels/overridden", Value: &apiextensionsv1.JSON{Raw: []byte(`"yes"`)}}}
	addMember := []placementv1beta1.JSONPatchOverride{{Operator: placementv1beta1.JSONPatchOverrideOpAdd, Path: "/data/member", Value: &apiextensionsv1.JSON{Raw: []byte(`"${MEMBER-CLUSTER-NAME}"`)}}}
	onFleet := &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: fleet}}}}
	rules := func(patch []placementv1beta1.JSONPatchOverride) *placementv1beta1.OverridePolicy {
		return &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{{ClusterSelector: onFleet, OverrideType: placementv1beta1.JSONPatchOverrideType, JSONPatchOverrides: patch}}}
	}
	testenv.Create(t, user, &placementv1beta1.ClusterResourceOverride{ObjectMeta: metav1.ObjectMeta{Name: "own-cro"}, Spec: placementv1beta1.ClusterResourceOverrideSpec{
		ClusterResourceSelectors: []placementv1beta1.OverrideResourceSelector{{Version: "v1", Kind: "Namespace", Name: "own"}, {Version: "v1", Kind: "Namespace", Name: "own-ext"}},
		Policy:                   rules(addLabel)}})
	for _, ns := range []string{"own", "own-ext"} {
		testenv.Create(t, user, &placementv1beta1.ResourceOverride{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "own-ro"}, Spec: placementv1beta1.ResourceOverrideSpec{
			ResourceSelectors: []placementv1beta1.OverrideResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: "settings"}},
			Policy:            rules(addMember)}})
	}

	// Placements: a rolling one that upsyncs and keeps one old snapshot, a
	// ResourcePlacement (PickN, with a state hand-off rule), one the agent reports unavailable, and one
	// rolled out by a staged update run.
	affinity := &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{RequiredDuringSchedulingIgnoredDuringExecution: onFleet}}
	pickAll := func() *placementv1beta1.PlacementPolicy {
		return &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAll, Affinity: affinity}
	}
	crp := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "own"}, Spec: placementv1beta1.PlacementSpec{
		ResourceSelectors:    []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "own"}},
		Policy:               pickAll(),
		RevisionHistoryLimit: ptr.To[int32](1),
		UpsyncSelectors:      []placementv1beta1.UpsyncSelector{{Version: "v1", Kind: "ConfigMap", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"upsync": "yes"}}}},
	}}
	testenv.Create(t, user, crp)
	testenv.Create(t, user, &placementv1beta1.ResourcePlacement{ObjectMeta: metav1.ObjectMeta{Namespace: "own-rp", Name: "own-rp"}, Spec: placementv1beta1.PlacementSpec{
		ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: "settings"}},
		Policy:            &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](3), Affinity: affinity},
		// State hand-off: the scheduler freezes the values onto the bindings.
		StatusFeedback: []placementv1beta1.StatusFeedbackRule{{Version: "v1", Kind: "ConfigMap", JSONPaths: []placementv1beta1.JSONPathRule{{Name: "k", Path: ".data.k"}}}},
		StateHandOff: []placementv1beta1.StateHandOffRule{{Name: "k", Feedback: placementv1beta1.HandOffFeedback{
			Version: "v1", Kind: "ConfigMap", Namespace: "own-rp", Name: "settings", JSONPathName: "k"}}},
	}})
	testenv.Create(t, user, &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: unavailablePlacement}, Spec: placementv1beta1.PlacementSpec{
		ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: unavailablePlacement}},
		Policy:            &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{"own-c"}},
	}})
	testenv.Create(t, user, &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "own-ext"}, Spec: placementv1beta1.PlacementSpec{
		ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "own-ext"}},
		Policy:            pickAll(),
		Strategy:          placementv1beta1.RolloutStrategy{Type: placementv1beta1.ExternalRolloutStrategyType},
	}})
	testenv.Create(t, user, &placementv1beta1.ClusterStagedUpdateStrategy{ObjectMeta: metav1.ObjectMeta{Name: "own-ext"}, Spec: placementv1beta1.StagedUpdateStrategySpec{
		Stages: []placementv1beta1.StageConfig{{Name: "all", LabelSelector: &metav1.LabelSelector{MatchLabels: fleet}, MaxConcurrency: ptr.To(intstr.FromString("100%"))}},
	}})
	own := pipeline.PlacementKey{Name: "own"}
	rp := pipeline.PlacementKey{Namespace: "own-rp", Name: "own-rp"}
	ext := pipeline.PlacementKey{Name: "own-ext"}
	unavailable := pipeline.PlacementKey{Name: unavailablePlacement}
	members := []string{"own-a", "own-b", "own-c"}
	waitBindings(t, user, own, members, availableOverridden)
	waitBindings(t, user, rp, members, available)
	waitBindings(t, user, unavailable, []string{"own-c"}, func(b placementv1beta1.BindingObj) error {
		if !conditions.IsCurrentTrue(b.GetBindingStatus().Conditions, placementv1beta1.ConditionApplied, b.GetGeneration()) || len(b.GetBindingStatus().FailedPlacements) == 0 {
			return fmt.Errorf("not applied with a failed placement: %+v", b.GetBindingStatus())
		}
		return nil
	})
	waitBindings(t, user, ext, members, func(b placementv1beta1.BindingObj) error {
		if b.GetBindingSpec().State != placementv1beta1.BindingStateScheduled {
			return fmt.Errorf("state %s", b.GetBindingSpec().State)
		}
		return nil
	})
	testenv.Eventually(t, ownershipTimeout, func() error {
		p := &placementv1beta1.ClusterResourcePlacement{}
		if err := user.Get(ctx, types.NamespacedName{Name: "own-ext"}, p); err != nil {
			return err
		}
		if p.Status.ObservedResourceIndex != "0" {
			return fmt.Errorf("own-ext has resource index %q", p.Status.ObservedResourceIndex)
		}
		return nil
	})
	testenv.Create(t, user, &placementv1beta1.ClusterStagedUpdateRun{ObjectMeta: metav1.ObjectMeta{Name: "own-ext-0"},
		Spec: placementv1beta1.StagedUpdateRunSpec{PlacementName: "own-ext", ResourceSnapshotIndex: "0", StagedUpdateStrategyName: "own-ext"}})
	waitBindings(t, user, ext, members, availableOverridden)

	// A rebalance, two edits of the selected objects and two of the policy:
	// the scheduler records the rebalance, the placement controller deletes
	// the snapshots beyond the history limit.
	edit(t, user, &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "own"}}, func(o client.Object) {
		p := o.(*placementv1beta1.ClusterResourcePlacement)
		metav1.SetMetaDataAnnotation(&p.ObjectMeta, placementv1beta1.AnnotationRebalance, "1")
	})
	for i, v := range []string{"v2", "v3"} {
		edit(t, user, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "own", Name: "settings"}}, func(o client.Object) { o.(*corev1.ConfigMap).Data["k"] = v })
		edit(t, user, &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "own"}}, func(o client.Object) {
			p := o.(*placementv1beta1.ClusterResourcePlacement)
			p.Spec.Policy.Tolerations = append(p.Spec.Policy.Tolerations, placementv1beta1.Toleration{Key: fmt.Sprintf("own/unused-%d", i), Operator: placementv1beta1.TolerationOpExists})
		})
		want := fmt.Sprint(i + 1)
		testenv.Eventually(t, ownershipTimeout, func() error {
			p := &placementv1beta1.ClusterResourcePlacement{}
			if err := user.Get(ctx, types.NamespacedName{Name: "own"}, p); err != nil {
				return err
			}
			if p.Status.ObservedResourceIndex != want {
				return fmt.Errorf("own has resource index %q, want %s", p.Status.ObservedResourceIndex, want)
			}
			return nil
		})
	}
	testenv.Eventually(t, ownershipTimeout, func() error {
		policies := &placementv1beta1.ClusterSchedulingPolicySnapshotList{}
		resources := &placementv1beta1.ClusterResourceSnapshotList{}
		for _, l := range []client.ObjectList{policies, resources} {
			if err := user.List(ctx, l, client.MatchingLabels{placementv1beta1.LabelPlacementName: "own"}); err != nil {
				return err
			}
		}
		if len(policies.Items) > 2 || len(resources.Items) > 2 {
			return fmt.Errorf("own keeps %d policy and %d resource snapshots, want at most 2 of each (history limit 1)", len(policies.Items), len(resources.Items))
		}
		for _, s := range policies.Items {
			if s.Labels[placementv1beta1.LabelIsLatestSnapshot] == "true" && s.Annotations[placementv1beta1.AnnotationRebalanced] == "" {
				return fmt.Errorf("the latest policy snapshot %s does not record the rebalance", s.Name)
			}
		}
		return nil
	})
	waitBindings(t, user, own, members, availableOverridden)

	// The leader's sweeper records the member of the lost replica as such.
	waitMember(t, user, "own-swept", func(mc *clusterv1beta1.MemberCluster) error {
		if c := conditions.Get(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected); c == nil || c.Reason != clusterv1beta1.ReasonHubReplicaLost {
			return fmt.Errorf("AgentConnected: %+v", c)
		}
		if mc.Status.AgentSession != nil {
			return fmt.Errorf("the lost session is still recorded: %+v", mc.Status.AgentSession)
		}
		return nil
	})
	rec.observe(t, "MemberCluster", "status.agentSession", pipeline.ManagerReplicaSweeper)

	// own-c renews its certificate and reconnects with the new one: the tunnel
	// server clears the previous serial.
	agentC.renew(t)
	waitMember(t, user, "own-c", func(mc *clusterv1beta1.MemberCluster) error {
		if mc.Status.Identity == nil || mc.Status.Identity.PreviousCertificateSerial != "" {
			return fmt.Errorf("identity: %+v", mc.Status.Identity)
		}
		if mc.Status.Identity.CertificateSerial != pki.Serial(agentC.cert.Leaf) {
			return fmt.Errorf("identity %+v does not name the renewed certificate", mc.Status.Identity)
		}
		return nil
	})
	rec.observe(t, "MemberCluster", "status.identity.previousCertificateSerial", pipeline.ManagerTunnelServer)

	// own-b stops matching the placements' required terms: the PickN
	// placement's binding there stays (IgnoredDuringExecution) and the
	// scheduler says it is misplaced (a binding of a picked cluster has no
	// Scheduled condition until then); the PickAll placements leave own-b.
	edit(t, user, &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "own-b"}}, func(o client.Object) {
		delete(o.GetLabels(), "suite")
	})
	testenv.Eventually(t, ownershipTimeout, func() error {
		bindings, err := pipeline.ListBindings(ctx, user, rp)
		if err != nil {
			return err
		}
		for _, b := range bindings {
			if b.GetBindingSpec().TargetCluster != "own-b" {
				continue
			}
			if c := conditions.Get(b.GetBindingStatus().Conditions, placementv1beta1.ConditionScheduled); c == nil || c.Reason != placementv1beta1.ReasonMisplaced {
				return fmt.Errorf("own-rp's binding on own-b: Scheduled %+v, want Misplaced", c)
			}
			return nil
		}
		return errors.New("own-rp has no binding on own-b")
	})

	// A NoExecute taint evicts every placement from own-b: failover asks, the
	// scheduler unschedules, the rollout controller (the update run, for
	// own-ext) deletes the bindings, the work generator the Work, and the
	// agent's confirmation (the tunnel server) and upsync let the Work go.
	edit(t, user, &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "own-b"}}, func(o client.Object) {
		mc := o.(*clusterv1beta1.MemberCluster)
		mc.Spec.Taints = append(mc.Spec.Taints, clusterv1beta1.Taint{Key: "own/maintenance", Value: "true", Effect: clusterv1beta1.TaintEffectNoExecute})
	})
	for _, k := range []pipeline.PlacementKey{own, rp, ext} {
		waitBindings(t, user, k, []string{"own-a", "own-c"}, nil)
	}
	waitNoWork(t, user, "own-b")

	// A deleted placement: own-a's agent confirms the removal, own-c's does not
	// and the work-cleanup timeout lets its Work go.
	agentC.confirm.Store(false)
	if err := user.Delete(ctx, crp); err != nil {
		t.Fatal(err)
	}
	waitGone(t, user, &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "own"}})
	testenv.Eventually(t, ownershipTimeout, func() error {
		works := &placementv1beta1.WorkList{}
		if err := user.List(ctx, works, client.MatchingLabels{placementv1beta1.LabelPlacementName: "own"}); err != nil {
			return err
		}
		if len(works.Items) > 0 {
			return fmt.Errorf("%d Work of the deleted placement remain", len(works.Items))
		}
		return nil
	})

	// Deleted overrides lose their snapshots, then their finalizer.
	for _, o := range []client.Object{
		&placementv1beta1.ClusterResourceOverride{ObjectMeta: metav1.ObjectMeta{Name: "own-cro"}},
		&placementv1beta1.ResourceOverride{ObjectMeta: metav1.ObjectMeta{Namespace: "own", Name: "own-ro"}},
		&placementv1beta1.ResourceOverride{ObjectMeta: metav1.ObjectMeta{Namespace: "own-ext", Name: "own-ro"}},
	} {
		if err := user.Delete(ctx, o); err != nil {
			t.Fatal(err)
		}
		waitGone(t, user, o)
	}

	// own-a leaves (`agent leave`: its agent stopped and removed everything):
	// the join server marks and deletes it, membership deletes its bindings,
	// lets their Work go and removes its finalizer.
	agentA.leave(t)
	waitGone(t, user, &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "own-a"}})

	// own-c's API server stops answering: the tunnel server records it
	// unhealthy, and so Stalled.
	agentC.unhealthy.Store(true)
	waitMember(t, user, "own-c", func(mc *clusterv1beta1.MemberCluster) error {
		if !conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionStalled) {
			return fmt.Errorf("not stalled: %+v", mc.Status.Conditions)
		}
		return nil
	})

	// The user changes the stalled member's spec: membership writes Stalled
	// again, for the new generation.
	edit(t, user, &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "own-c"}}, func(o client.Object) {
		mc := o.(*clusterv1beta1.MemberCluster)
		mc.Spec.Taints = append(mc.Spec.Taints, clusterv1beta1.Taint{Key: "own/cordon", Value: "true", Effect: clusterv1beta1.TaintEffectNoSchedule})
	})
	waitMember(t, user, "own-c", func(mc *clusterv1beta1.MemberCluster) error {
		if c := conditions.Get(mc.Status.Conditions, clusterv1beta1.ConditionStalled); c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != mc.Generation {
			return fmt.Errorf("Stalled is not current: %+v (generation %d)", c, mc.Generation)
		}
		return nil
	})

	// The join server writes Stalled only if a stalled member re-joins in the
	// moment after its spec changed and before membership writes its status:
	// a race this test cannot order.
	rec.exempt("MemberCluster", "status.conditions["+clusterv1beta1.ConditionStalled+"]", pipeline.ManagerJoin)
	// Not exercised here yet: failback (hub/failover/failback_controller.go)
	// needs a placement moved off its preferred cluster and that cluster
	// eligible again, which this test's sequence never gives back (own-b stays
	// tainted). Its envtests (hub/failover/failback_controller_test.go) and the
	// kwok e2e TestFailback* write these fields through the same writer; adding
	// the step here is open work.
	for _, row := range []struct{ kind, field string }{
		{"ClusterResourcePlacement", "metadata.annotations[" + placementv1beta1.AnnotationFailbackFailures + "]"},
		{"ClusterResourcePlacement", "status.conditions[ClusterResourcePlacement" + placementv1beta1.ConditionFailback + "]"},
		{"ClusterResourceBinding", "status.conditions[" + placementv1beta1.ConditionFailbackRequested + "]"},
	} {
		rec.exempt(row.kind, row.field, pipeline.ManagerFailback)
	}
	// Not exercised here yet either: fencing (hub/failover/fencing_controller.go)
	// needs a placement with policy.fencing leaving a member whose agent is cut
	// off, which this test's placements never have. Its envtests
	// (hub/failover/fencing_controller_test.go, hub/app/fencing_test.go) write
	// these fields through the same writer; adding the step here is open work.
	rec.exempt("ClusterResourcePlacement", "status.conditions[ClusterResourcePlacement"+placementv1beta1.ConditionFencing+"]", pipeline.ManagerFencing)
	rec.exempt("Work", "metadata.finalizers["+placementv1beta1.AppliedResourcesCleanupFinalizer+"]", pipeline.ManagerFencing)
	// Not exercised here yet either: a rolling update's wave analysis
	// (hub/rollout/analysis_controller.go) needs a placement with
	// strategy.rollingUpdate.analysis and agents reporting feedback, which
	// this test's placements never have. Its envtests
	// (hub/rollout/analysis_controller_test.go) and the kwok e2e
	// TestARollingUpdateWhoseSecondWaveFailsItsAnalysisReturnsTheFirstWave
	// write these fields through the same writer; adding the step here is open
	// work.
	rec.exempt("ClusterResourcePlacement", "status.rolloutAnalysis", pipeline.ManagerRollout)
	rec.exempt("ClusterResourcePlacement", "status.conditions[ClusterResourcePlacement"+placementv1beta1.ConditionRolloutAnalysis+"]", pipeline.ManagerRollout)
	rec.exempt("ClusterResourceSnapshot", "metadata.annotations["+placementv1beta1.AnnotationFailedAnalysis+"]", pipeline.ManagerRollout)
	testenv.Eventually(t, 10*time.Second, func() error {
		if lines := rec.report(); len(lines) > 0 {
			return fmt.Errorf("managedFields and deletions disagree with hub/pipeline/ownership.go:\n%s", strings.Join(lines, "\n"))
		}
		return nil
	})
}

// userClient is a client whose writes carry testUser's field manager.
func userClient(t *testing.T) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.UserAgent = testUser
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// startRecordedHub runs every hub controller against the test API server, as
// startHub does, with the tunnel on addr and its requests seen by rec.
func startRecordedHub(t *testing.T, rec *ownershipRecorder, addr string) {
	t.Helper()
	opts := NewOptions()
	opts.ReplicaName = "test-hub"
	opts.TunnelBindAddress = addr
	// Long enough for membership to release a leaving member's Work first
	// (it looks again every 2s), short enough for the step that waits for it.
	opts.WorkCleanupTimeout = 6 * time.Second
	// The leader sweeps every third of it (3s here); the swept member's replica
	// has no Lease at all, so it is swept at the first look. This replica's own
	// Lease must not run out on a loaded machine (a 3s Lease did, and swept
	// the test's live members).
	opts.ReplicaLeaseDuration = 9 * time.Second
	// A taint no toleration matches evicts at once.
	opts.DefaultToleration = 0
	if err := opts.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.WrapTransport = rec.wrap
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := setupHub(context.Background(), mgr, opts); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("hub: %v", err)
		}
	})
	testenv.Eventually(t, ownershipTimeout, func() error {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			return err
		}
		return conn.Close()
	})
}

// edit changes an object with a fresh read, retried on conflict.
func edit(t *testing.T, c client.Client, obj client.Object, change func(client.Object)) {
	t.Helper()
	// A merge patch of what change changed, computed from a fresh read: the
	// controllers write these objects' status all the while, and an update
	// (resourceVersion included) lost to them again and again on a loaded
	// machine, whatever the retries.
	ctx := context.Background()
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	before := obj.DeepCopyObject().(client.Object)
	change(obj)
	if err := c.Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

func waitGone(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	testenv.Eventually(t, ownershipTimeout, func() error {
		err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("%T %s is still there (finalizers %v)", obj, client.ObjectKeyFromObject(obj), obj.GetFinalizers())
	})
}

func waitMember(t *testing.T, c client.Client, name string, check func(*clusterv1beta1.MemberCluster) error) {
	t.Helper()
	testenv.Eventually(t, ownershipTimeout, func() error {
		mc := &clusterv1beta1.MemberCluster{}
		if err := c.Get(context.Background(), types.NamespacedName{Name: name}, mc); err != nil {
			return err
		}
		if err := check(mc); err != nil {
			return fmt.Errorf("member %s: %w", name, err)
		}
		return nil
	})
}

// waitNoWork waits until a member's namespace holds no Work of this test.
func waitNoWork(t *testing.T, c client.Client, member string) {
	t.Helper()
	testenv.Eventually(t, ownershipTimeout, func() error {
		works := &placementv1beta1.WorkList{}
		if err := c.List(context.Background(), works, client.InNamespace(clusterv1beta1.MemberNamespace(member))); err != nil {
			return err
		}
		if len(works.Items) > 0 {
			return fmt.Errorf("%s still has %d Work", member, len(works.Items))
		}
		return nil
	})
}

// waitBindings waits until the placement's bindings are exactly one on each
// member and each passes check (nil: any).
func waitBindings(t *testing.T, c client.Client, k pipeline.PlacementKey, members []string, check func(placementv1beta1.BindingObj) error) {
	t.Helper()
	testenv.Eventually(t, ownershipTimeout, func() error {
		bindings, err := pipeline.ListBindings(context.Background(), c, k)
		if err != nil {
			return err
		}
		var on []string
		for _, b := range bindings {
			on = append(on, b.GetBindingSpec().TargetCluster)
			if check != nil {
				if err := check(b); err != nil {
					return fmt.Errorf("%s: binding %s: %w", k.Name, b.GetName(), err)
				}
			}
		}
		sort.Strings(on)
		if fmt.Sprint(on) != fmt.Sprint(members) {
			return fmt.Errorf("%s has bindings on %v, want %v", k.Name, on, members)
		}
		return nil
	})
}

func available(b placementv1beta1.BindingObj) error {
	if !conditions.IsCurrentTrue(b.GetBindingStatus().Conditions, placementv1beta1.ConditionAvailable, b.GetGeneration()) {
		return fmt.Errorf("not available: %+v", b.GetBindingStatus().Conditions)
	}
	return nil
}

func availableOverridden(b placementv1beta1.BindingObj) error {
	if err := available(b); err != nil {
		return err
	}
	if c := conditions.Get(b.GetBindingStatus().Conditions, placementv1beta1.ConditionOverridden); c == nil || c.Reason != placementv1beta1.ReasonOverridden {
		return fmt.Errorf("not overridden: %+v", c)
	}
	return nil
}
