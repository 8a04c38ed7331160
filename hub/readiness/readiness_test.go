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

package readiness

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// cond is a condition of a type, status, reason and message.
func cond(t string, s metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg}
}

const (
	T = metav1.ConditionTrue
	F = metav1.ConditionFalse
	U = metav1.ConditionUnknown
)

// crp is a ClusterResourcePlacement with placement-level conditions given by
// their per-cluster types.
func crp(conds ...metav1.Condition) *placementv1beta1.ClusterResourcePlacement {
	p := &placementv1beta1.ClusterResourcePlacement{}
	for _, c := range conds {
		if c.Type != placementv1beta1.ConditionReady {
			c.Type = placementv1beta1.ClusterResourcePlacementConditionType(c.Type)
		}
		p.Status.Conditions = append(p.Status.Conditions, c)
	}
	return p
}

// rolledOut are the stage conditions of a placement Available everywhere.
func rolledOut() []metav1.Condition {
	return []metav1.Condition{
		cond(placementv1beta1.ConditionScheduled, T, placementv1beta1.ReasonSchedulingPolicyFulfilled, "1 cluster selected"),
		cond(placementv1beta1.ConditionRolloutStarted, T, placementv1beta1.ReasonRolloutStarted, "all 1 clusters"),
		cond(placementv1beta1.ConditionOverridden, T, placementv1beta1.ReasonNoOverrideSpecified, "all 1 clusters"),
		cond(placementv1beta1.ConditionWorkSynchronized, T, placementv1beta1.ReasonWorkSynchronized, "all 1 clusters"),
		cond(placementv1beta1.ConditionApplied, T, placementv1beta1.ReasonApplied, "all 1 clusters"),
		cond(placementv1beta1.ConditionAvailable, T, placementv1beta1.ReasonAvailable, "all 1 clusters"),
	}
}

// with replaces the condition of c's type in conds.
func with(conds []metav1.Condition, cs ...metav1.Condition) []metav1.Condition {
	out := append([]metav1.Condition(nil), conds...)
	for _, c := range cs {
		for i := range out {
			if out[i].Type == c.Type {
				out[i] = c
			}
		}
	}
	return out
}

func TestPlacementVerdicts(t *testing.T) {
	tests := []struct {
		name string
		p    placementv1beta1.PlacementObj
		want Verdict
	}{{
		name: "a placement the scheduler has not handled is unknown and reconciling",
		p:    crp(),
		want: Verdict{Ready: U, Reason: placementv1beta1.ReasonSchedulePending, Message: "waiting for the scheduler"},
	}, {
		name: "a placement no cluster fits is stalled with the scheduler's reason",
		p:    crp(cond(placementv1beta1.ConditionScheduled, F, placementv1beta1.ReasonScheduleFailed, "no cluster fits")),
		want: Verdict{Ready: F, Stalled: true, Reason: placementv1beta1.ReasonScheduleFailed, Message: "ClusterResourcePlacementScheduled is False: no cluster fits"},
	}, {
		name: "a placement whose selectors cannot be answered is stalled",
		p:    crp(cond(placementv1beta1.ConditionScheduled, F, placementv1beta1.ReasonInvalidResourceSelectors, "unknown kind")),
		want: Verdict{Ready: F, Stalled: true, Reason: placementv1beta1.ReasonInvalidResourceSelectors, Message: "ClusterResourcePlacementScheduled is False: unknown kind"},
	}, {
		name: "a placement with objects left out for an earlier placement is stalled",
		p:    crp(append(rolledOut(), cond(placementv1beta1.ConditionConflicted, T, placementv1beta1.ReasonSelectedByEarlierPlacement, "ConfigMap a/b"))...),
		want: Verdict{Ready: F, Stalled: true, Reason: placementv1beta1.ReasonSelectedByEarlierPlacement, Message: "ClusterResourcePlacementConflicted is True: ConfigMap a/b"},
	}, {
		name: "a scheduled placement without bindings yet is unknown and reconciling",
		p:    crp(cond(placementv1beta1.ConditionScheduled, T, placementv1beta1.ReasonSchedulingPolicyFulfilled, "1 cluster selected")),
		want: Verdict{Ready: U, Reason: placementv1beta1.ReasonRolloutPending, Message: "waiting for the bindings of the scheduled clusters"},
	}, {
		name: "a PickN placement asking for no cluster is ready with none",
		p: func() placementv1beta1.PlacementObj {
			p := crp(cond(placementv1beta1.ConditionScheduled, T, placementv1beta1.ReasonSchedulingPolicyFulfilled, "0 of 0 clusters selected"))
			p.Spec.Policy = &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To(int32(0))}
			return p
		}(),
		want: Verdict{Ready: T, Reason: placementv1beta1.ReasonSchedulingPolicyFulfilled, Message: "ClusterResourcePlacementScheduled is True: 0 of 0 clusters selected"},
	}, {
		name: "a placement whose apply failed is stalled with the apply's reason",
		p: crp(with(rolledOut(),
			cond(placementv1beta1.ConditionApplied, F, placementv1beta1.ReasonApplyFailed, "1 of 1 clusters: m1"),
			cond(placementv1beta1.ConditionAvailable, U, placementv1beta1.ReasonNotAvailableYet, "waiting for Applied"))...),
		want: Verdict{Ready: F, Stalled: true, Reason: placementv1beta1.ReasonApplyFailed, Message: "ClusterResourcePlacementApplied is False: 1 of 1 clusters: m1"},
	}, {
		name: "a placement whose override does not fit is stalled, even while a later cluster is pending",
		p: crp(with(rolledOut(),
			cond(placementv1beta1.ConditionRolloutStarted, U, placementv1beta1.ReasonRolloutPending, "waiting for 1 of 2 clusters"),
			cond(placementv1beta1.ConditionOverridden, F, placementv1beta1.ReasonOverrideFailed, "patch does not apply"))...),
		want: Verdict{Ready: F, Stalled: true, Reason: placementv1beta1.ReasonOverrideFailed, Message: "ClusterResourcePlacementOverridden is False: patch does not apply"},
	}, {
		name: "a placement whose resources are not available yet is reconciling, not stalled",
		p:    crp(with(rolledOut(), cond(placementv1beta1.ConditionAvailable, F, placementv1beta1.ReasonNotAvailableYet, "1 of 1 clusters: m1"))...),
		want: Verdict{Ready: F, Reason: placementv1beta1.ReasonNotAvailableYet, Message: "ClusterResourcePlacementAvailable is False: 1 of 1 clusters: m1"},
	}, {
		name: "a placement whose availability rule does not compile is stalled",
		p:    crp(with(rolledOut(), cond(placementv1beta1.ConditionAvailable, F, placementv1beta1.ReasonAvailabilityRuleInvalid, "bad CEL"))...),
		want: Verdict{Ready: F, Stalled: true, Reason: placementv1beta1.ReasonAvailabilityRuleInvalid, Message: "ClusterResourcePlacementAvailable is False: bad CEL"},
	}, {
		name: "a placement held back by the rolling update is reconciling",
		p:    crp(with(rolledOut(), cond(placementv1beta1.ConditionRolloutStarted, F, placementv1beta1.ReasonRolloutNotStartedYet, "maxUnavailable"))...),
		want: Verdict{Ready: F, Reason: placementv1beta1.ReasonRolloutNotStartedYet, Message: "ClusterResourcePlacementRolloutStarted is False: maxUnavailable"},
	}, {
		name: "a placement waiting on a disconnected agent is unknown and reconciling, not ready",
		p: crp(with(rolledOut(),
			cond(placementv1beta1.ConditionApplied, U, placementv1beta1.ReasonAgentDisconnected, "1 of 1 clusters have a disconnected agent: m1"),
			cond(placementv1beta1.ConditionAvailable, U, placementv1beta1.ReasonAgentDisconnected, "1 of 1 clusters have a disconnected agent: m1"))...),
		want: Verdict{Ready: U, Reason: placementv1beta1.ReasonAgentDisconnected, Message: "ClusterResourcePlacementApplied is Unknown: 1 of 1 clusters have a disconnected agent: m1"},
	}, {
		name: "a placement available everywhere is ready",
		p:    crp(rolledOut()...),
		want: Verdict{Ready: T, Reason: placementv1beta1.ReasonAvailable, Message: "ClusterResourcePlacementAvailable is True: all 1 clusters"},
	}, {
		name: "a ReportDiff placement is ready once the diff is reported",
		p:    crp(append(rolledOut()[:4], cond(placementv1beta1.ConditionDiffReported, T, placementv1beta1.ReasonDiffReported, "all 1 clusters"))...),
		want: Verdict{Ready: T, Reason: placementv1beta1.ReasonDiffReported, Message: "ClusterResourcePlacementDiffReported is True: all 1 clusters"},
	}, {
		name: "a ResourcePlacement reads its own condition types",
		p: func() placementv1beta1.PlacementObj {
			rp := &placementv1beta1.ResourcePlacement{}
			rp.Status.Conditions = []metav1.Condition{cond(placementv1beta1.ResourcePlacementConditionType(placementv1beta1.ConditionScheduled), F, placementv1beta1.ReasonScheduleFailed, "no cluster fits")}
			return rp
		}(),
		want: Verdict{Ready: F, Stalled: true, Reason: placementv1beta1.ReasonScheduleFailed, Message: "ResourcePlacementScheduled is False: no cluster fits"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Placement(tt.p)); diff != "" {
				t.Errorf("Placement() (-want +got):\n%s", diff)
			}
		})
	}
}

func run(conds ...metav1.Condition) *placementv1beta1.ClusterStagedUpdateRun {
	return &placementv1beta1.ClusterStagedUpdateRun{Status: placementv1beta1.StagedUpdateRunStatus{Conditions: conds}}
}

func TestUpdateRunVerdicts(t *testing.T) {
	initialized := cond(placementv1beta1.ConditionUpdateRunInitialized, T, placementv1beta1.ReasonUpdateRunInitialized, "1 cluster in 1 stage")
	tests := []struct {
		name string
		run  *placementv1beta1.ClusterStagedUpdateRun
		want Verdict
	}{{
		name: "a run not initialized yet is unknown and reconciling",
		run:  run(),
		want: Verdict{Ready: U, Reason: placementv1beta1.ReasonUpdateRunProgressing, Message: "the run has not been initialized yet"},
	}, {
		name: "a run waiting for its placement to appear is reconciling",
		run:  run(cond(placementv1beta1.ConditionUpdateRunInitialized, F, placementv1beta1.ReasonUpdateRunPlacementNotFound, "web does not exist")),
		want: Verdict{Ready: F, Reason: placementv1beta1.ReasonUpdateRunPlacementNotFound, Message: "Initialized is False: web does not exist"},
	}, {
		name: "a run waiting for another run is reconciling",
		run:  run(cond(placementv1beta1.ConditionUpdateRunInitialized, F, placementv1beta1.ReasonUpdateRunWaitingForOtherRun, "web-1 is in progress")),
		want: Verdict{Ready: F, Reason: placementv1beta1.ReasonUpdateRunWaitingForOtherRun, Message: "Initialized is False: web-1 is in progress"},
	}, {
		name: "a run of a placement that is not External is stalled",
		run:  run(cond(placementv1beta1.ConditionUpdateRunInitialized, F, placementv1beta1.ReasonUpdateRunPlacementNotExternal, "RollingUpdate")),
		want: Verdict{Ready: F, Stalled: true, Reason: placementv1beta1.ReasonUpdateRunPlacementNotExternal, Message: "Initialized is False: RollingUpdate"},
	}, {
		name: "a run whose strategy cannot be used is stalled",
		run:  run(cond(placementv1beta1.ConditionUpdateRunInitialized, F, placementv1beta1.ReasonUpdateRunInvalidStrategy, "bad selector")),
		want: Verdict{Ready: F, Stalled: true, Reason: placementv1beta1.ReasonUpdateRunInvalidStrategy, Message: "Initialized is False: bad selector"},
	}, {
		name: "a run updating clusters is reconciling, not ready",
		run:  run(initialized, cond(placementv1beta1.ConditionUpdateRunProgressing, T, placementv1beta1.ReasonUpdateRunProgressing, "stage prod: updating m1")),
		want: Verdict{Ready: F, Reason: placementv1beta1.ReasonUpdateRunProgressing, Message: "Progressing is True: stage prod: updating m1"},
	}, {
		name: "a run waiting for an approval is reconciling",
		run:  run(initialized, cond(placementv1beta1.ConditionUpdateRunProgressing, F, placementv1beta1.ReasonUpdateRunWaiting, "waiting for approval")),
		want: Verdict{Ready: F, Reason: placementv1beta1.ReasonUpdateRunWaiting, Message: "Progressing is False: waiting for approval"},
	}, {
		name: "a stopped run is where its spec asks: ready",
		run:  run(initialized, cond(placementv1beta1.ConditionUpdateRunProgressing, F, placementv1beta1.ReasonUpdateRunStopped, "stopped")),
		want: Verdict{Ready: T, Reason: placementv1beta1.ReasonUpdateRunStopped, Message: "Progressing is False: stopped"},
	}, {
		name: "an initialized run that has not started a stage is unknown and reconciling",
		run:  run(initialized),
		want: Verdict{Ready: U, Reason: placementv1beta1.ReasonUpdateRunProgressing, Message: "the run has not started its first stage yet"},
	}, {
		name: "a run that succeeded is ready",
		run: run(initialized, cond(placementv1beta1.ConditionUpdateRunProgressing, F, placementv1beta1.ReasonUpdateRunFinished, "done"),
			cond(placementv1beta1.ConditionUpdateRunSucceeded, T, placementv1beta1.ReasonUpdateRunSucceeded, "1 cluster runs index 0")),
		want: Verdict{Ready: T, Reason: placementv1beta1.ReasonUpdateRunSucceeded, Message: "Succeeded is True: 1 cluster runs index 0"},
	}, {
		name: "a run that failed is stalled",
		run: run(initialized, cond(placementv1beta1.ConditionUpdateRunProgressing, F, placementv1beta1.ReasonUpdateRunFinished, "done"),
			cond(placementv1beta1.ConditionUpdateRunSucceeded, F, placementv1beta1.ReasonUpdateRunFailed, "snapshot deleted")),
		want: Verdict{Ready: F, Stalled: true, Reason: placementv1beta1.ReasonUpdateRunFailed, Message: "Succeeded is False: snapshot deleted"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, UpdateRun(tt.run)); diff != "" {
				t.Errorf("UpdateRun() (-want +got):\n%s", diff)
			}
		})
	}
}

func member(conds ...metav1.Condition) *clusterv1beta1.MemberCluster {
	return &clusterv1beta1.MemberCluster{Status: clusterv1beta1.MemberClusterStatus{Conditions: conds}}
}

func TestMemberClusterVerdicts(t *testing.T) {
	joined := cond(clusterv1beta1.ConditionJoined, T, clusterv1beta1.ReasonJoined, "joined")
	connected := cond(clusterv1beta1.ConditionAgentConnected, T, clusterv1beta1.ReasonAgentConnected, "connected")
	healthy := cond(clusterv1beta1.ConditionHealthy, T, clusterv1beta1.ReasonHealthy, "ready")
	tests := []struct {
		name string
		mc   *clusterv1beta1.MemberCluster
		want Verdict
	}{{
		name: "a member the hub has written nothing for is joining",
		mc:   member(),
		want: Verdict{Ready: U, Reason: clusterv1beta1.ReasonJoining, Message: "Joined is not reported yet"},
	}, {
		name: "a member whose agent has not registered is reconciling",
		mc:   member(cond(clusterv1beta1.ConditionJoined, U, clusterv1beta1.ReasonJoining, "waiting for the agent")),
		want: Verdict{Ready: U, Reason: clusterv1beta1.ReasonJoining, Message: "Joined is Unknown: waiting for the agent"},
	}, {
		name: "a joined member whose agent never connected is reconciling",
		mc:   member(joined, cond(clusterv1beta1.ConditionAgentConnected, U, clusterv1beta1.ReasonAgentNeverConnected, "no agent yet")),
		want: Verdict{Ready: U, Reason: clusterv1beta1.ReasonAgentNeverConnected, Message: "AgentConnected is Unknown: no agent yet"},
	}, {
		name: "a leaving member is reconciling",
		mc:   member(cond(clusterv1beta1.ConditionJoined, F, clusterv1beta1.ReasonLeaving, "removing"), connected, healthy),
		want: Verdict{Ready: F, Reason: clusterv1beta1.ReasonLeaving, Message: "Joined is False: removing"},
	}, {
		name: "a member whose agent disconnected is stalled",
		mc:   member(joined, cond(clusterv1beta1.ConditionAgentConnected, F, clusterv1beta1.ReasonAgentDisconnected, "closed"), cond(clusterv1beta1.ConditionHealthy, U, clusterv1beta1.ReasonHealthUnknown, "not connected")),
		want: Verdict{Ready: F, Stalled: true, Reason: clusterv1beta1.ReasonAgentDisconnected, Message: "AgentConnected is False: closed"},
	}, {
		name: "a member whose heartbeats stopped is stalled",
		mc:   member(joined, cond(clusterv1beta1.ConditionAgentConnected, F, clusterv1beta1.ReasonHeartbeatTimeout, "3 missed"), healthy),
		want: Verdict{Ready: F, Stalled: true, Reason: clusterv1beta1.ReasonHeartbeatTimeout, Message: "AgentConnected is False: 3 missed"},
	}, {
		name: "a member refused for version skew is stalled",
		mc:   member(joined, cond(clusterv1beta1.ConditionAgentConnected, F, clusterv1beta1.ReasonVersionSkew, "upgrade the agent"), healthy),
		want: Verdict{Ready: F, Stalled: true, Reason: clusterv1beta1.ReasonVersionSkew, Message: "AgentConnected is False: upgrade the agent"},
	}, {
		name: "a member whose hub replica was lost is reconciling, as its agent reconnects by itself",
		mc:   member(joined, cond(clusterv1beta1.ConditionAgentConnected, F, clusterv1beta1.ReasonHubReplicaLost, "hub-1 lost"), healthy),
		want: Verdict{Ready: F, Reason: clusterv1beta1.ReasonHubReplicaLost, Message: "AgentConnected is False: hub-1 lost"},
	}, {
		name: "a member whose API server is unhealthy is stalled",
		mc:   member(joined, connected, cond(clusterv1beta1.ConditionHealthy, F, clusterv1beta1.ReasonUnhealthy, "readyz failed")),
		want: Verdict{Ready: F, Stalled: true, Reason: clusterv1beta1.ReasonUnhealthy, Message: "Healthy is False: readyz failed"},
	}, {
		name: "a connected member whose health is not reported yet is reconciling",
		mc:   member(joined, connected),
		want: Verdict{Ready: U, Reason: clusterv1beta1.ReasonHealthUnknown, Message: "Healthy is not reported yet"},
	}, {
		name: "a joined, connected, healthy member is ready",
		mc:   member(joined, connected, healthy),
		want: Verdict{Ready: T, Reason: clusterv1beta1.ReasonHealthy, Message: "Healthy is True: ready"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, MemberCluster(tt.mc)); diff != "" {
				t.Errorf("MemberCluster() (-want +got):\n%s", diff)
			}
		})
	}
}

// ignoreTimes leaves lastTransitionTime out of comparisons.
var ignoreTimes = cmp.Transformer("noTime", func(c metav1.Condition) metav1.Condition { c.LastTransitionTime = metav1.Time{}; return c })

func TestSetKeepsOnlyTheKstatusConditionsThatHold(t *testing.T) {
	other := cond("Available", T, "Available", "all")
	tests := []struct {
		name   string
		before []metav1.Condition
		v      Verdict
		want   []metav1.Condition
	}{{
		name:   "reconciling adds Ready and Reconciling and removes Stalled",
		before: []metav1.Condition{other, cond("Stalled", T, "ApplyFailed", "x")},
		v:      Verdict{Ready: U, Reason: "ApplyPending", Message: "m"},
		want:   []metav1.Condition{other, cond("Ready", U, "ApplyPending", "m"), cond("Reconciling", T, "ApplyPending", "m")},
	}, {
		name:   "stalled adds Stalled and removes Reconciling",
		before: []metav1.Condition{other, cond("Reconciling", T, "ApplyPending", "m")},
		v:      Verdict{Ready: F, Stalled: true, Reason: "ApplyFailed", Message: "x"},
		want:   []metav1.Condition{other, cond("Ready", F, "ApplyFailed", "x"), cond("Stalled", T, "ApplyFailed", "x")},
	}, {
		name:   "ready removes both",
		before: []metav1.Condition{other, cond("Ready", F, "ApplyFailed", "x"), cond("Stalled", T, "ApplyFailed", "x")},
		v:      Verdict{Ready: T, Reason: "Available", Message: "all"},
		want:   []metav1.Condition{other, cond("Ready", T, "Available", "all")},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conds := append([]metav1.Condition(nil), tt.before...)
			if !Set(&conds, tt.v, 3) {
				t.Error("Set reported no change")
			}
			for i := range tt.want {
				if tt.want[i].Type != other.Type {
					tt.want[i].ObservedGeneration = 3
				}
			}
			if diff := cmp.Diff(tt.want, conds, ignoreTimes); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if Set(&conds, tt.v, 3) {
				t.Error("Set reported a change the second time")
			}
		})
	}
}

func TestTheKstatusConditionTypesAreTheSameInBothAPIGroups(t *testing.T) {
	got := []string{clusterv1beta1.ConditionReady, clusterv1beta1.ConditionReconciling, clusterv1beta1.ConditionStalled}
	want := []string{placementv1beta1.ConditionReady, placementv1beta1.ConditionReconciling, placementv1beta1.ConditionStalled}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cluster condition types (-placement +cluster):\n%s", diff)
	}
}
