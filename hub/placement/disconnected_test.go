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

package placement

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// disconnected is a binding whose Work was applied and available when its
// member's agent went away (as the work generator reports it).
func disconnected(cluster string) placementv1beta1.ClusterResourceBinding {
	b := bindingWith(cluster, "s-1", len(stages), "")
	for _, t := range []string{placementv1beta1.ConditionApplied, placementv1beta1.ConditionAvailable} {
		conditions.Set(&b.Status.Conditions, t, metav1.ConditionUnknown, placementv1beta1.ReasonAgentDisconnected,
			"the agent of member "+cluster+" has been disconnected since 2026-11-26T21:00:00Z", 2)
	}
	return b
}

func TestADisconnectedMembersAppliedAndAvailableAreUnknownAndSaySo(t *testing.T) {
	b := disconnected("member-2")
	got := perClusterStatus(&b, "s-1", map[string]string{"s-1": "1"}, false, 1)
	for _, typ := range []string{placementv1beta1.ConditionApplied, placementv1beta1.ConditionAvailable} {
		c := conditions.Get(got.Conditions, typ)
		if diff := cmp.Diff([]string{string(metav1.ConditionUnknown), placementv1beta1.ReasonAgentDisconnected},
			[]string{string(c.Status), c.Reason}); diff != "" {
			t.Errorf("per-cluster %s (-want +got):\n%s", typ, diff)
		}
	}
}

func TestTheSummaryNamesTheDisconnectedClusters(t *testing.T) {
	ok := bindingWith("member-1", "s-1", len(stages), "")
	gone := disconnected("member-2")
	statuses := []placementv1beta1.PerClusterPlacementStatus{
		perClusterStatus(&ok, "s-1", nil, false, 1),
		perClusterStatus(&gone, "s-1", nil, false, 1),
	}
	status, reason, msg := summarise(statuses, placementv1beta1.ConditionAvailable, placementv1beta1.ReasonNotAvailableYet, placementv1beta1.ReasonAvailable)
	if diff := cmp.Diff([]string{string(metav1.ConditionUnknown), placementv1beta1.ReasonAgentDisconnected},
		[]string{string(status), reason}); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if !strings.Contains(msg, "1 of 2 clusters") || !strings.Contains(msg, "member-2") {
		t.Errorf("summary message %q does not name member-2", msg)
	}
}

func TestTheSummaryOfTrueUsesThePerClusterTrueReason(t *testing.T) {
	for _, stage := range stages {
		b := bindingWith("member-1", "s-1", len(stages), "")
		for _, s := range stages {
			conditions.Set(&b.Status.Conditions, s.condType, metav1.ConditionTrue, s.trueReason, "ok", 2)
		}
		statuses := []placementv1beta1.PerClusterPlacementStatus{perClusterStatus(&b, "s-1", nil, false, 1)}
		_, reason, _ := summarise(statuses, stage.condType, stage.pendingReason, stage.trueReason)
		if reason != stage.trueReason {
			t.Errorf("summary of %s has reason %s, want %s", stage.condType, reason, stage.trueReason)
		}
	}
	if got := stages[1]; got.condType != placementv1beta1.ConditionOverridden || got.trueReason != placementv1beta1.ReasonOverridden {
		t.Errorf("Overridden's summary reason is %s, want %s", got.trueReason, placementv1beta1.ReasonOverridden)
	}
}
