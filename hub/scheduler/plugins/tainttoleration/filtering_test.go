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

package tainttoleration

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

const (
	noSchedule = clusterv1beta1.TaintEffectNoSchedule
	noExecute  = clusterv1beta1.TaintEffectNoExecute
)

func clusterWithTaints(taints ...clusterv1beta1.Taint) clusterv1beta1.MemberCluster {
	return ft.Cluster("member-1", ft.Taints(taints...))
}

func taint(key, value string, effect clusterv1beta1.TaintEffect) clusterv1beta1.Taint {
	return ft.Taint(key, value, effect)
}

func policyTolerating(tols ...placementv1beta1.Toleration) *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{Tolerations: tols}
}

func equal(key, value string, effect clusterv1beta1.TaintEffect) placementv1beta1.Toleration {
	return placementv1beta1.Toleration{Key: key, Operator: placementv1beta1.TolerationOpEqual, Value: value, Effect: effect}
}

func exists(key string, effect clusterv1beta1.TaintEffect) placementv1beta1.Toleration {
	return placementv1beta1.Toleration{Key: key, Operator: placementv1beta1.TolerationOpExists, Effect: effect}
}

func taintAddedAgo(key string, effect clusterv1beta1.TaintEffect, ago time.Duration) clusterv1beta1.Taint {
	t := ft.Taint(key, "", effect)
	t.TimeAdded = &metav1.Time{Time: ft.Now.Add(-ago)}
	return t
}

func forSeconds(tol placementv1beta1.Toleration, s int64) placementv1beta1.Toleration {
	tol.TolerationSeconds = &s
	return tol
}

func TestFilter(t *testing.T) {
	maintenance := taint("maintenance", "true", noSchedule)
	tests := []struct {
		name    string
		cluster clusterv1beta1.MemberCluster
		bound   bool
		policy  *placementv1beta1.PlacementPolicy
		want    []string // reasons; nil when the cluster passes
	}{
		{
			name:    "a cluster without taints passes",
			cluster: clusterWithTaints(),
			policy:  nil,
		},
		{
			name:    "a NoSchedule taint keeps a placement without tolerations off",
			cluster: clusterWithTaints(maintenance),
			want:    []string{"taint maintenance=true:NoSchedule is not tolerated"},
		},
		{
			name:    "a NoExecute taint keeps a placement without tolerations off",
			cluster: clusterWithTaints(taint("dedicated", "gpu", noExecute)),
			want:    []string{"taint dedicated=gpu:NoExecute is not tolerated"},
		},
		{
			name:    "an Equal toleration with the same key, value and effect tolerates the taint",
			cluster: clusterWithTaints(maintenance),
			policy:  policyTolerating(equal("maintenance", "true", noSchedule)),
		},
		{
			name:    "an Equal toleration with another value does not tolerate the taint",
			cluster: clusterWithTaints(maintenance),
			policy:  policyTolerating(equal("maintenance", "false", noSchedule)),
			want:    []string{"taint maintenance=true:NoSchedule is not tolerated"},
		},
		{
			name:    "an Equal toleration with another key does not tolerate the taint",
			cluster: clusterWithTaints(maintenance),
			policy:  policyTolerating(equal("upgrade", "true", noSchedule)),
			want:    []string{"taint maintenance=true:NoSchedule is not tolerated"},
		},
		{
			name:    "a toleration without an operator is an Equal toleration",
			cluster: clusterWithTaints(maintenance),
			policy:  policyTolerating(placementv1beta1.Toleration{Key: "maintenance", Value: "true"}),
		},
		{
			name:    "an Exists toleration with the same key tolerates the taint whatever its value",
			cluster: clusterWithTaints(maintenance),
			policy:  policyTolerating(exists("maintenance", noSchedule)),
		},
		{
			name:    "an Exists toleration with another key does not tolerate the taint",
			cluster: clusterWithTaints(maintenance),
			policy:  policyTolerating(exists("upgrade", "")),
			want:    []string{"taint maintenance=true:NoSchedule is not tolerated"},
		},
		{
			name:    "an Exists toleration with an empty key tolerates every taint",
			cluster: clusterWithTaints(maintenance, taint("dedicated", "", noExecute)),
			policy:  policyTolerating(exists("", "")),
		},
		{
			name:    "a toleration with an empty effect tolerates both effects",
			cluster: clusterWithTaints(taint("k", "v", noSchedule), taint("k", "v", noExecute)),
			policy:  policyTolerating(equal("k", "v", "")),
		},
		{
			name:    "a toleration of the NoSchedule effect does not tolerate the NoExecute taint of the same key",
			cluster: clusterWithTaints(taint("k", "v", noSchedule), taint("k", "v", noExecute)),
			policy:  policyTolerating(equal("k", "v", noSchedule)),
			want:    []string{"taint k=v:NoExecute is not tolerated"},
		},
		{
			name:    "every untolerated taint is reported",
			cluster: clusterWithTaints(maintenance, taint("dedicated", "", noExecute)),
			want:    []string{"taint maintenance=true:NoSchedule is not tolerated", "taint dedicated:NoExecute is not tolerated"},
		},
		{
			name:    "the automatic unreachable taint keeps new placements off",
			cluster: clusterWithTaints(taint(clusterv1beta1.TaintUnreachable, "", noSchedule)),
			want:    []string{"taint cluster.flotilla.io/unreachable:NoSchedule is not tolerated"},
		},
		{
			name:    "on a cluster the placement is on, an untolerated NoExecute taint is reported as not yet evicting",
			cluster: clusterWithTaints(taint("k", "v", noExecute)),
			bound:   true,
			want:    []string{"taint k=v:NoExecute is not tolerated (the placement stays until its toleration runs out)"},
		},
		{
			name:    "a NoExecute taint tolerated for a time that has run out keeps a new placement off",
			cluster: clusterWithTaints(taintAddedAgo("k", noExecute, time.Hour)),
			policy:  policyTolerating(forSeconds(exists("k", noExecute), 60)),
			want:    []string{"taint k:NoExecute is tolerated only for a time that has run out"},
		},
		{
			name:    "a NoExecute taint tolerated for a time that has run out is the failover's call where the placement is",
			cluster: clusterWithTaints(taintAddedAgo("k", noExecute, time.Hour)),
			bound:   true,
			policy:  policyTolerating(forSeconds(exists("k", noExecute), 60)),
		},
		{
			name:    "the first matching toleration decides, as in failover: a shorter one listed first that ran out keeps a new placement off",
			cluster: clusterWithTaints(taintAddedAgo("k", noExecute, 11*time.Second)),
			policy:  policyTolerating(forSeconds(exists("k", noExecute), 10), forSeconds(exists("k", noExecute), 300)),
			want:    []string{"taint k:NoExecute is tolerated only for a time that has run out"},
		},
		{
			name:    "tolerationSeconds 0 keeps a new placement off even before the hub recorded the taint's time",
			cluster: clusterWithTaints(taint("k", "", noExecute)),
			policy:  policyTolerating(forSeconds(exists("k", noExecute), 0)),
			want:    []string{"taint k:NoExecute is tolerated only for a time that has run out"},
		},
		{
			name:    "tolerationSeconds past what a duration holds do not wrap round into expired",
			cluster: clusterWithTaints(taintAddedAgo("k", noExecute, time.Hour)),
			policy:  policyTolerating(forSeconds(exists("k", noExecute), 9_300_000_000)),
		},
		{
			name:    "a NoExecute taint tolerated for longer than it exists lets a new placement in",
			cluster: clusterWithTaints(taintAddedAgo("k", noExecute, time.Second)),
			policy:  policyTolerating(forSeconds(exists("k", noExecute), 60)),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ft.Input(tt.policy, tt.cluster)
			if tt.bound {
				in.Bindings = ft.Bindings("test", "member-1")
			}
			got := ft.RunFilter(t, New(), in)["member-1"]
			if tt.want == nil {
				if got != nil {
					t.Fatalf("Filter() = %v, want nil", got)
				}
				return
			}
			if got.Code() != framework.ClusterUnschedulable {
				t.Errorf("Filter() code = %v, want ClusterUnschedulable", got.Code())
			}
			if diff := cmp.Diff(tt.want, got.Reasons()); diff != "" {
				t.Errorf("Filter() reasons (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPreFilterSkipsWhenNoClusterHasTaints(t *testing.T) {
	in := ft.Input(nil, ft.Cluster("member-1"), ft.Cluster("member-2"))
	state := framework.NewCycleState(&in)
	_, st := New().PreFilter(t.Context(), state, nil, state.Clusters())
	if !st.IsSkip() {
		t.Errorf("PreFilter() = %v, want Skip", st)
	}
}
