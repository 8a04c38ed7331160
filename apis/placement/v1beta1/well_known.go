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

package v1beta1

// Labels the hub puts on the objects it creates for a placement.
const (
	// LabelPlacementName holds the name of the placement an object belongs to. It is
	// on snapshots, bindings and Works.
	LabelPlacementName = "placement.flotilla.io/placement-name"

	// LabelPlacementNamespace holds the namespace of the ResourcePlacement a Work
	// belongs to; absent for ClusterResourcePlacements.
	LabelPlacementNamespace = "placement.flotilla.io/placement-namespace"

	// LabelIsLatestSnapshot is "true" on the latest resource snapshots and the latest
	// scheduling policy snapshot of a placement, and "false" on older ones.
	LabelIsLatestSnapshot = "placement.flotilla.io/is-latest-snapshot"

	// LabelResourceIndex holds the index (revision) of a resource snapshot's set: "0",
	// "1", and so on.
	LabelResourceIndex = "placement.flotilla.io/resource-index"

	// LabelPolicyIndex holds the index (revision) of a scheduling policy snapshot.
	LabelPolicyIndex = "placement.flotilla.io/policy-index"

	// LabelParentBinding holds the name of the binding a Work was generated from.
	LabelParentBinding = "placement.flotilla.io/parent-binding"
)

// Annotations the hub puts on the objects it creates for a placement.
const (
	// AnnotationFailbackFailures holds, on a placement with policy.failback,
	// when the placement was evicted from each cluster within the last hour (a
	// JSON object of cluster name to RFC 3339 times), so that the back-off of a
	// cluster that failed repeatedly survives a hub restart. The failback
	// controller writes it.
	AnnotationFailbackFailures = "placement.flotilla.io/failback-failures"

	// AnnotationResourceHash holds the sha256 hash of all the resources in a resource
	// snapshot set; it is on the set's first snapshot.
	AnnotationResourceHash = "placement.flotilla.io/resource-hash"

	// AnnotationNumberOfResourceSnapshots holds how many snapshots the set of a
	// resource snapshot has; it is on the set's first snapshot.
	AnnotationNumberOfResourceSnapshots = "placement.flotilla.io/number-of-resource-snapshots"

	// AnnotationSubindexOfResourceSnapshot holds the position of a resource snapshot in
	// its set, from "1"; absent on the first snapshot of the set.
	AnnotationSubindexOfResourceSnapshot = "placement.flotilla.io/subindex-of-resource-snapshot"

	// AnnotationNumberOfClusters holds, on a scheduling policy snapshot of a PickN
	// placement, how many clusters the policy asks for.
	AnnotationNumberOfClusters = "placement.flotilla.io/number-of-clusters"

	// AnnotationPlacementGeneration holds, on a scheduling policy snapshot, the
	// generation of the placement it was made from.
	AnnotationPlacementGeneration = "placement.flotilla.io/placement-generation"

	// AnnotationRebalance, set (or changed) by a user on a placement, asks the
	// scheduler to choose its clusters afresh once, ignoring where it is now (the
	// scheduler otherwise keeps placements where they are, e.g. after a failover).
	AnnotationRebalance = "placement.flotilla.io/rebalance"

	// AnnotationRetryAnalysis, set (or changed) by a user on a staged update run
	// paused by a failed analysis (onFailure Pause), runs that analysis again
	// from its first round, once per new value; the run records the value it
	// acted on (hashed) in the analysis's status.retried.
	AnnotationRetryAnalysis = "placement.flotilla.io/retry-analysis"

	// AnnotationRebalanced records, on the scheduling policy snapshot, the value of
	// AnnotationRebalance the scheduler last acted on.
	AnnotationRebalanced = "placement.flotilla.io/rebalanced"

	// AnnotationFailedAnalysis marks, on the first resource snapshot of a set, that
	// an analysis failed on it and a ClusterStagedUpdateRun or the rolling update
	// rolled it back; the value names the run and the stage (or the placement and
	// the wave) and the check. A run of a marked snapshot is not initialized
	// (ResourceSnapshotFailed), and the rolling update does not move clusters to
	// it: a change of the placement's resources makes a new snapshot to roll out. Removing the annotation (kubectl
	// annotate ... placement.flotilla.io/failed-analysis-) lets a run take the
	// snapshot again.
	AnnotationFailedAnalysis = "placement.flotilla.io/failed-analysis"
)

// Finalizers on placement.flotilla.io objects.
const (
	// PlacementCleanupFinalizer keeps a placement until the hub has deleted its
	// snapshots.
	PlacementCleanupFinalizer = "placement.flotilla.io/placement-cleanup"

	// SchedulerCleanupFinalizer keeps a placement until the scheduler has deleted its
	// bindings.
	SchedulerCleanupFinalizer = "placement.flotilla.io/scheduler-cleanup"

	// WorkCleanupFinalizer keeps a binding until the hub has deleted its Works.
	WorkCleanupFinalizer = "placement.flotilla.io/work-cleanup"

	// AppliedResourcesCleanupFinalizer keeps a Work until the agent has removed the
	// resources it applied from the member cluster (or abandoned them, as the delete
	// strategy says).
	AppliedResourcesCleanupFinalizer = "placement.flotilla.io/applied-resources-cleanup"
)

// AnnotationCreateOnly, set to "true" on a manifest of a Work, asks the agent to
// create the object if the member cluster lacks it and otherwise to leave it as it
// is: the agent never updates, takes over or deletes such an object, not even when
// the Work goes. The hub sets it on the Namespace a ResourcePlacement brings to its
// members, which other placements or the member itself may use too.
const AnnotationCreateOnly = "placement.flotilla.io/create-only"

// Provenance annotations: every object the agent applies carries them, so that
// on a member cluster an object says where it came from. The work generator puts
// the first three on each manifest of a Work; the agent adds AnnotationWork.
// Neither a drift nor a difference: the agent leaves them out of comparisons.
const (
	// AnnotationHub names the hub (the fleet) that placed the object: the hub's
	// --hub-name.
	AnnotationHub = "placement.flotilla.io/hub"

	// AnnotationPlacement names the placement that placed the object:
	// "ClusterResourcePlacement/NAME" or "ResourcePlacement/NAMESPACE/NAME".
	AnnotationPlacement = "placement.flotilla.io/placement"

	// AnnotationResourceIndex holds the index of the resource snapshot the
	// object was last applied from (the LabelResourceIndex of the snapshot).
	AnnotationResourceIndex = "placement.flotilla.io/resource-index"

	// AnnotationWork holds the name of the Work that applied the object (in the
	// member's namespace on the hub). An object is deleted for a Work only while
	// it still carries that Work's name here.
	AnnotationWork = "placement.flotilla.io/work"
)

// ProvenanceAnnotations are the provenance annotations, in the order above.
var ProvenanceAnnotations = []string{AnnotationHub, AnnotationPlacement, AnnotationResourceIndex, AnnotationWork}
