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
	"context"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Plugin is a scheduler plugin. A plugin implements one or more of the extension
// point interfaces below; the framework calls it at each point it implements, in
// the order the plugins were registered. Plugins are pure: they read the policy,
// the cycle state and the clusters, and keep per-cycle data only in the CycleState.
type Plugin interface {
	// Name identifies the plugin in decisions (FilteredBy), in logs and as its
	// CycleState key. It must be unique in a framework.
	Name() string
}

// PostBatchPlugin may lower the number of new clusters a PickN cycle picks.
type PostBatchPlugin interface {
	Plugin
	// PostBatch is called once per PickN cycle that has clusters to add, with batch,
	// the number still to pick (numberOfClusters minus the clusters kept). It
	// returns the number to pick, which the framework caps at batch (a plugin can
	// only lower it). A non-success status other than Skip ends the cycle: an error
	// status with the error, a rejection with nothing picked.
	PostBatch(ctx context.Context, state *CycleState, policy *placementv1beta1.PlacementPolicy, batch int) (int, *Status)
}

// PreFilterResult narrows the clusters a cycle considers.
type PreFilterResult struct {
	// Includes reports whether a cluster stays under consideration. Clusters it
	// leaves out get Reason in their decision, with the plugin as FilteredBy; where
	// the placement is already bound to such a cluster, it no longer matches (like
	// ClusterMismatch). nil keeps every cluster.
	Includes func(*ClusterInfo) bool
	// Reason says why a left-out cluster is not considered.
	Reason string
}

// PreFilterPlugin prepares a cycle before any Filter call.
type PreFilterPlugin interface {
	Plugin
	// PreFilter is called once per cycle with the clusters under consideration (those
	// earlier PreFilter results kept). It computes what its Filter needs (compiled
	// selectors, indexes) into the CycleState and returns:
	//   - Skip when its Filter has nothing to do this cycle: Filter is then not called;
	//   - a result to narrow the clusters under consideration (nil for all of them);
	//   - a rejection (ClusterUnschedulable or ClusterMismatch) when no cluster can
	//     fit; every cluster considered gets its message;
	//   - an error status (FromError) when the policy cannot be evaluated.
	PreFilter(ctx context.Context, state *CycleState, policy *placementv1beta1.PlacementPolicy, clusters []*ClusterInfo) (*PreFilterResult, *Status)
}

// FilterPlugin decides whether a cluster can take the placement.
type FilterPlugin interface {
	Plugin
	// Filter reports whether the placement can be newly placed on the cluster: nil
	// if it can, else a status saying why not, with the code that tells the framework
	// what the reason means for a cluster the placement is already bound to
	// (cluster.Bound): ClusterUnschedulable (it stays; reported), ClusterMismatch (it
	// no longer matches) or ClusterAlreadySelected (expected; ignored). See Code.
	//
	// The framework calls Filter for every cluster under consideration: for a cluster
	// without a binding it stops at the first rejection, which names the plugin in
	// the decision; for a bound cluster it calls every filter, to report all reasons.
	// Filter must not modify the cluster and should not allocate for clusters that
	// pass.
	Filter(ctx context.Context, state *CycleState, policy *placementv1beta1.PlacementPolicy, cluster *ClusterInfo) *Status
}

// NarrowingPlugin is a FilterPlugin that can name, from the indexes of the
// cycle's fleet view, the only clusters its Filter may pass (such as the clusters
// with a label a required selector asks for). The framework does not filter the
// others when it reads a fleet view: whatever the other plugins say, they are not
// selected. It settles their decisions (which plugin rejects them and why: the
// same as when every cluster is filtered) only where the result shows them; see
// CycleInput.MaxUnselectedDecisions.
type NarrowingPlugin interface {
	FilterPlugin
	// Candidates is called once per cycle over a fleet view, after PreFilter and
	// unless it returned Skip. It returns the positions in fleet.Members,
	// ascending and without duplicates, of a superset of the clusters its Filter
	// passes: Filter must reject every other cluster. ok is false when it cannot
	// tell; every cluster is then filtered. Callers must not modify positions.
	Candidates(ctx context.Context, state *CycleState, policy *placementv1beta1.PlacementPolicy, fleet *Fleet) (positions []int32, ok bool)
}

// PreScorePlugin prepares the Score calls of a cycle.
type PreScorePlugin interface {
	Plugin
	// PreScore is called once per cycle that ranks clusters, with the feasible
	// clusters: those the placement is bound to and still matches, and those that
	// passed every selection-independent filter. It computes what Score needs (such
	// as the minimum and maximum of a property). It returns Skip when its Score has
	// nothing to do, or an error status. For a ReservePlugin it is also the point to
	// record the initial selection (CycleState.Selected), as it runs before the
	// plugin's Filter and Score are used to pick.
	PreScore(ctx context.Context, state *CycleState, policy *placementv1beta1.PlacementPolicy, clusters []*ClusterInfo) *Status
}

// ScorePlugin scores feasible clusters.
type ScorePlugin interface {
	Plugin
	// Score returns the plugin's contribution to the cluster's score; the framework
	// adds up the contributions of all score plugins. A non-success status is an
	// error.
	Score(ctx context.Context, state *CycleState, policy *placementv1beta1.PlacementPolicy, cluster *ClusterInfo) (ClusterScore, *Status)
}

// ReservePlugin is implemented by plugins whose Filter or Score depend on which
// clusters are already selected in the cycle, such as topology spread: such a
// plugin is selection-dependent. In a PickN cycle the framework picks clusters one
// at a time; before each pick it calls the selection-dependent plugins' Filter and
// Score on the remaining candidates, and after each pick it calls Reserve; when it
// scales down it removes clusters one at a time and calls Unreserve. The other
// plugins' Filter and Score run once per cluster per cycle. In PickAll and
// PickFixed cycles selection-dependent filters run once like the others.
type ReservePlugin interface {
	Plugin
	// Reserve records that the cluster was selected.
	Reserve(ctx context.Context, state *CycleState, policy *placementv1beta1.PlacementPolicy, cluster *ClusterInfo)
	// Unreserve records that the cluster was removed from the selection.
	Unreserve(ctx context.Context, state *CycleState, policy *placementv1beta1.PlacementPolicy, cluster *ClusterInfo)
}
