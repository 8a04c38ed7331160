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

package framework

import (
	"math/rand"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// CycleInput is everything one scheduling cycle looks at. The framework does not
// modify it.
type CycleInput struct {
	// PlacementName is "name" for a ClusterResourcePlacement and "namespace/name"
	// for a ResourcePlacement. A peer placement of the same name is never taken for
	// this one.
	PlacementName string

	// PlacementLabels are the placement's labels.
	PlacementLabels map[string]string

	// Policy is the placement's scheduling policy; nil means PickAll without
	// constraints.
	Policy *placementv1beta1.PlacementPolicy

	// Clusters are all member clusters, in any order. Ignored when Fleet is set.
	Clusters []clusterv1beta1.MemberCluster
	// Fleet, when set, is all member clusters as the scheduler's fleet snapshot
	// holds them: sorted by name and shared by every cycle of its generation, so
	// the cycle neither copies nor sorts them.
	Fleet *Fleet

	// Locations are all Locations; only read when the policy has locationSelectors.
	Locations []clusterv1beta1.Location

	// Bindings are this placement's existing bindings, in any state. Those in state
	// Scheduled or Bound and not being deleted are active: the placement is on their
	// clusters, and the cycle keeps them there unless the policy says otherwise.
	Bindings []placementv1beta1.BindingObj

	// OtherPlacements are the other placements of the same kind (for a
	// ResourcePlacement: in its namespace) and the clusters they are on, for
	// placement affinity and anti-affinity.
	OtherPlacements []PlacementPeer

	// DynamicSelectors are cluster label selectors produced at run time (Kratix
	// dynamic scheduling); see EffectiveSelectors.
	DynamicSelectors []DynamicSelector

	// Group is the resource group being scheduled: empty for the placement's
	// resources as a whole, or the name of a group that DynamicSelectors may
	// address (Kratix directory-based scheduling).
	Group string

	// SelectorMerge is how DynamicSelectors combine with the placement's own label
	// selectors. Default: MergeByPrecedence.
	SelectorMerge SelectorMergeMode

	// ExcludedClusters maps the clusters the placement must not be on, whatever its
	// policy, to a human-readable reason (such as the ClusterResourcePlacementEviction
	// that evicted it). The evicted plugin rejects them with ClusterEvicted: they get
	// no new binding, and an active binding to one goes (PickN picks a replacement).
	// PickFixed placements are never moved, so it does not apply to them.
	ExcludedClusters map[string]string

	// Now is the time the cycle runs at (for the disconnected grace period).
	// Default: time.Now().
	Now time.Time

	// Rand picks among equally good choices: among the equally top-scored clusters
	// of a PickN pick, and among matching Locations. nil picks the first by name,
	// which makes the cycle fully deterministic.
	Rand *rand.Rand

	// MaxUnselectedDecisions, when positive, bounds the decisions the result holds
	// about clusters the cycle does not select: it holds every selected one, the
	// first MaxUnselectedDecisions others in CycleResult.Decisions' order, and
	// every later one whose binding goes (Unschedule: the binding records why);
	// the rest are not built. A caller that records only those (the scheduler's
	// policy snapshot) saves a decision per member. Default 0: a decision for
	// every cluster.
	MaxUnselectedDecisions int
}

// PlacementPeer is another placement, for placement affinity and anti-affinity.
type PlacementPeer struct {
	// Name is the placement's name ("namespace/name" for a ResourcePlacement).
	Name string
	// Labels are the placement's labels, which affinity terms select it by.
	Labels map[string]string
	// Clusters are the member clusters the placement is on (active bindings).
	Clusters []string
}

// CycleResult is the outcome of one scheduling cycle.
type CycleResult struct {
	// Decisions holds one decision for every input cluster, and one for every
	// cluster a PickFixed policy names that does not exist: the selected clusters
	// first, then the others, each sorted by name. CycleInput.MaxUnselectedDecisions
	// leaves out the others after the first few (but not the unscheduled ones).
	Decisions []placementv1beta1.ClusterDecision

	// Selected are the clusters that must have an active binding after the cycle:
	// the kept ones and the newly picked ones, sorted.
	Selected []string

	// Misplaced maps the selected clusters that no longer match the policy, but
	// keep the placement (PickN, PickFixed: never moved), to the reason.
	Misplaced map[string]string

	// Unschedule are the clusters, sorted, whose active bindings must go: a PickAll
	// cluster that stopped matching, a PickN cluster removed by scaling down (lowest
	// score first), a cluster no longer named by PickFixed, or a cluster that no
	// longer exists. Their decisions (if they still exist) give the reason.
	Unschedule []string

	// ChosenLocation is the Location the placement is kept in, when the policy has
	// locationSelectors and one was chosen.
	ChosenLocation string

	// Status, Reason and Message are for the Scheduled condition: True with
	// SchedulingPolicyFulfilled, or False with SchedulingPolicyUnfulfilled (fewer
	// clusters than asked) or ScheduleFailed (none). The message says how many
	// clusters were selected and why the others were left out.
	Status  metav1.ConditionStatus
	Reason  string
	Message string
}

// Decision returns the decision about the named cluster.
func (r *CycleResult) Decision(cluster string) (placementv1beta1.ClusterDecision, bool) {
	for _, d := range r.Decisions {
		if d.ClusterName == cluster {
			return d, true
		}
	}
	return placementv1beta1.ClusterDecision{}, false
}
