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

package failover

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// UnavailableEvictions returns the clusters an opted-in PickN placement must leave
// because its resources there have not been Available for
// policy.unavailableEvictionSeconds while the cluster itself is connected and
// healthy (a sick cluster is the taints' business), and when to look again.
func UnavailableEvictions(policy *placementv1beta1.PlacementPolicy, clusters []clusterv1beta1.MemberCluster, bindings []placementv1beta1.BindingObj, now time.Time) (map[string]TaintEviction, time.Duration) {
	if policy == nil || policy.PlacementType != placementv1beta1.PickN || policy.UnavailableEvictionSeconds == nil {
		return nil, 0
	}
	period := time.Duration(*policy.UnavailableEvictionSeconds) * time.Second
	fine := map[string]bool{}
	for i := range clusters {
		mc := &clusters[i]
		fine[mc.Name] = conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected) &&
			conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionHealthy)
	}
	out := map[string]TaintEviction{}
	var recheck time.Duration
	for _, b := range pipeline.ActiveBindings(bindings) {
		cluster := b.GetBindingSpec().TargetCluster
		if !fine[cluster] {
			continue
		}
		c := conditions.Get(b.GetBindingStatus().Conditions, placementv1beta1.ConditionAvailable)
		if c == nil || c.Status == metav1.ConditionTrue {
			continue
		}
		since := c.LastTransitionTime.Time
		deadline := since.Add(period)
		if now.Before(deadline) {
			recheck = pipeline.Sooner(recheck, deadline.Sub(now))
			continue
		}
		out[cluster] = TaintEviction{
			Reason:    fmt.Sprintf("resources not available for more than %s (%s: %s)", period, c.Reason, c.Message),
			Since:     deadline,
			TaintedAt: since,
			Cause:     "unavailable",
		}
	}
	return out, recheck
}
