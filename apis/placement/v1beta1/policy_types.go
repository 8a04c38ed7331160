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

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
)

// PlacementType is how a placement picks its clusters.
// +kubebuilder:validation:Enum=PickAll;PickN;PickFixed
type PlacementType string

const (
	// PickAll places on every eligible cluster that matches the affinity.
	PickAll PlacementType = "PickAll"
	// PickN places on numberOfClusters eligible clusters, the best ones by affinity
	// preferences and topology spread.
	PickN PlacementType = "PickN"
	// PickFixed places on the clusters named in clusterNames.
	PickFixed PlacementType = "PickFixed"
)

// PlacementPolicy decides which member clusters a placement's resources go to.
//
// A cluster is eligible when it has joined the fleet, is connected and healthy, all
// its taints are tolerated, and, if it sets strictMatchLabels, the policy selects it
// by its labels. When locationSelectors are set, the scheduler first picks one
// matching Location and then considers only that Location's clusters.
//
// +kubebuilder:validation:XValidation:rule="!has(self.clusterNames) || size(self.clusterNames) == 0 || (has(self.placementType) && self.placementType == 'PickFixed')",message="clusterNames can only be set when placementType is PickFixed",fieldPath=".clusterNames"
// +kubebuilder:validation:XValidation:rule="!has(self.placementType) || self.placementType != 'PickFixed' || (has(self.clusterNames) && size(self.clusterNames) > 0)",message="placementType PickFixed requires clusterNames",fieldPath=".clusterNames"
// +kubebuilder:validation:XValidation:rule="!has(self.numberOfClusters) || (has(self.placementType) && self.placementType == 'PickN')",message="numberOfClusters can only be set when placementType is PickN",fieldPath=".numberOfClusters"
// +kubebuilder:validation:XValidation:rule="!has(self.placementType) || self.placementType != 'PickN' || has(self.numberOfClusters)",message="placementType PickN requires numberOfClusters",fieldPath=".numberOfClusters"
// +kubebuilder:validation:XValidation:rule="!has(self.affinity) || !has(self.placementType) || self.placementType != 'PickFixed'",message="affinity cannot be set when placementType is PickFixed",fieldPath=".affinity"
// +kubebuilder:validation:XValidation:rule="!has(self.locationSelectors) || size(self.locationSelectors) == 0 || !has(self.placementType) || self.placementType != 'PickFixed'",message="locationSelectors cannot be set when placementType is PickFixed",fieldPath=".locationSelectors"
// +kubebuilder:validation:XValidation:rule="!has(self.topologySpreadConstraints) || size(self.topologySpreadConstraints) == 0 || (has(self.placementType) && self.placementType == 'PickN')",message="topologySpreadConstraints can only be set when placementType is PickN",fieldPath=".topologySpreadConstraints"
// +kubebuilder:validation:XValidation:rule="!has(self.unavailableEvictionSeconds) || (has(self.placementType) && self.placementType == 'PickN')",message="unavailableEvictionSeconds can only be set when placementType is PickN",fieldPath=".unavailableEvictionSeconds"
// +kubebuilder:validation:XValidation:rule="!has(self.clusterPreferences) || size(self.clusterPreferences) == 0 || (has(self.placementType) && self.placementType == 'PickN')",message="clusterPreferences can only be set when placementType is PickN",fieldPath=".clusterPreferences"
// +kubebuilder:validation:XValidation:rule="!has(self.failback) || (has(self.placementType) && self.placementType == 'PickN' && has(self.clusterPreferences) && size(self.clusterPreferences) > 0)",message="failback needs placementType PickN with clusterPreferences: it moves the placement back to a more preferred group",fieldPath=".failback"
// +kubebuilder:validation:XValidation:rule="!has(self.fencing) || (has(self.placementType) && self.placementType == 'PickN' && has(self.numberOfClusters) && self.numberOfClusters == 1)",message="fencing needs placementType PickN with numberOfClusters 1: it keeps a single copy from ever running twice, which other placements do not have",fieldPath=".fencing"
type PlacementPolicy struct {
	// PlacementType is how clusters are picked. It cannot be changed after the
	// placement is created.
	// +kubebuilder:default=PickAll
	// +optional
	PlacementType PlacementType `json:"placementType,omitempty"`

	// ClusterNames are the member clusters to place on, for placementType PickFixed
	// only. Names that are not member clusters, or not eligible, are reported as not
	// scheduled.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.all(x, self.exists_one(y, y == x))",message="clusterNames must be unique"
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`

	// NumberOfClusters is how many clusters to place on, for placementType PickN only.
	// Zero removes the resources from every cluster while keeping the placement.
	// At most 10000, the largest fleet Flotilla is built for.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	// +optional
	NumberOfClusters *int32 `json:"numberOfClusters,omitempty"`

	// LocationSelectors select Locations by their labels. When set, the scheduler
	// picks one Location that matches any selector and keeps the placement in it; the
	// rest of the policy then applies to that Location's clusters only.
	// +kubebuilder:validation:MaxItems=10
	// +optional
	LocationSelectors []metav1.LabelSelector `json:"locationSelectors,omitempty"`

	// Affinity constrains and ranks clusters by their labels and properties, and by
	// which other placements are on them. Not allowed with PickFixed.
	// +optional
	Affinity *Affinity `json:"affinity,omitempty"`

	// TopologySpreadConstraints spread the picked clusters across topology domains
	// (values of a cluster label). PickN only.
	// +kubebuilder:validation:MaxItems=10
	// +optional
	TopologySpreadConstraints []TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// Tolerations let the placement use clusters with matching taints. Existing
	// tolerations cannot be changed or removed, only new ones added.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Tolerations []Toleration `json:"tolerations,omitempty"`

	// ClusterPreferences are groups of clusters in order of preference, the most
	// preferred first, for placementType PickN only. A cluster belongs to the
	// first group whose labelSelector it matches; a cluster in no group is not
	// picked. The placement fills its numberOfClusters from the first group and
	// goes to the next group only for the clusters an earlier group cannot
	// provide (too few clusters, or clusters that are not eligible, tainted or
	// filtered out by the rest of the policy); the group's rank outweighs
	// affinity and topology spread scores, which order clusters within a group.
	// Scaling down removes clusters of the least preferred group first. A
	// placement stays on the clusters it is on: when a more preferred cluster
	// returns, it moves back only if failback is set. At most 10 groups; an empty
	// labelSelector ({}) matches every cluster, so it belongs last, as a
	// catch-all.
	// +kubebuilder:validation:MaxItems=10
	// +optional
	ClusterPreferences []ClusterPreference `json:"clusterPreferences,omitempty"`

	// UnavailableEvictionSeconds opts a PickN placement into availability-driven
	// eviction: when its resources on a cluster stay not Available this long while
	// the cluster itself is connected and healthy (for example a Deployment that
	// never becomes ready there), the placement moves to another cluster. Unset
	// means never. At most 2592000 (30 days).
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=2592000
	// +optional
	UnavailableEvictionSeconds *int32 `json:"unavailableEvictionSeconds,omitempty"`

	// Failback opts a PickN placement with clusterPreferences into moving back:
	// when a cluster of a more preferred group than one the placement is on has
	// been eligible (joined, connected, healthy, taints tolerated) for
	// stabilizationSeconds without a break, the placement moves there, one
	// cluster at a time; the copy on the cluster given up is removed only once
	// the new copy is Available. A cluster the placement was evicted from twice
	// or more within an hour is held out for a back-off (5 minutes, doubling with
	// each further failure, at most an hour). Unset means a placement stays
	// where it is.
	// +optional
	Failback *FailbackPolicy `json:"failback,omitempty"`

	// Fencing opts a single-copy placement (PickN, numberOfClusters 1) into
	// fencing: the copy never runs on two clusters at once. When the placement
	// must leave a cluster, the hub starts it elsewhere only once the old copy
	// is known stopped: the cluster's agent confirmed the removal, or
	// leaseSeconds (plus the hub's --fencing-margin) passed since the hub last
	// heard from that cluster. An agent cut off from the hub for leaseSeconds
	// stops the placement's workloads itself, as action says, and the hub's
	// Work restores them when the agent reconnects. A fenced placement does not
	// keep the old copy until the new one is Available (there is a gap instead
	// of an overlap). Unset means no fencing.
	// +optional
	Fencing *FencingPolicy `json:"fencing,omitempty"`
}

// FencingAction is what an agent cut off from the hub does to a fenced
// placement's workloads.
// +kubebuilder:validation:Enum=ScaleToZero;Remove
type FencingAction string

const (
	// FencingScaleToZero sets spec.replicas to 0 on the Deployments,
	// StatefulSets and ReplicaSets the Work applied; other objects stay as
	// they are.
	FencingScaleToZero FencingAction = "ScaleToZero"
	// FencingRemove deletes the objects the Work created, except Namespaces;
	// objects it took over and Namespaces stay.
	FencingRemove FencingAction = "Remove"
)

// FencingPolicy is how a single-copy placement is fenced
// (PlacementPolicy.Fencing). It is copied into the placement's Works, so that
// the agent knows it while cut off from the hub.
type FencingPolicy struct {
	// LeaseSeconds is how long an agent may be cut off from the hub before it
	// stops the workloads, counted on the agent from the start of its last
	// heartbeat the hub acknowledged; the hub counts it from the last
	// heartbeat it received, plus its --fencing-margin. At least 10, at most
	// 3600 (an hour). Default: 60.
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=3600
	// +kubebuilder:default=60
	// +optional
	LeaseSeconds *int32 `json:"leaseSeconds,omitempty"`

	// Action is what the agent does when the lease runs out: ScaleToZero (the
	// default) or Remove.
	// +kubebuilder:default=ScaleToZero
	// +optional
	Action FencingAction `json:"action,omitempty"`
}

// DefaultFencingLeaseSeconds is FencingPolicy.LeaseSeconds when unset.
const DefaultFencingLeaseSeconds = 60

// Lease is the fencing lease (DefaultFencingLeaseSeconds when unset).
func (f *FencingPolicy) Lease() time.Duration {
	if f == nil || f.LeaseSeconds == nil {
		return DefaultFencingLeaseSeconds * time.Second
	}
	return time.Duration(*f.LeaseSeconds) * time.Second
}

// ActionOrDefault is the fencing action (ScaleToZero when unset).
func (f *FencingPolicy) ActionOrDefault() FencingAction {
	if f == nil || f.Action == "" {
		return FencingScaleToZero
	}
	return f.Action
}

// FailbackPolicy is how a placement moves back to more preferred clusters
// (PlacementPolicy.Failback).
type FailbackPolicy struct {
	// StabilizationSeconds is how long a more preferred cluster must have been
	// eligible without a break before the placement moves back to it. At least
	// 1, at most 86400 (a day). Default: 60.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	// +optional
	StabilizationSeconds *int32 `json:"stabilizationSeconds,omitempty"`

	// MaxConcurrent is how many placements may be failing back at once across
	// the fleet for this one to start: it waits while that many or more are
	// under way. At least 1, at most 1000. Default: 10.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MaxConcurrent *int32 `json:"maxConcurrent,omitempty"`
}

// ClusterPreference is one group of clusters of PlacementPolicy.ClusterPreferences.
type ClusterPreference struct {
	// LabelSelector selects the clusters of the group by their labels.
	// +required
	LabelSelector metav1.LabelSelector `json:"labelSelector"`
}

// Affinity is the set of cluster and placement affinity rules of a placement.
type Affinity struct {
	// ClusterAffinity selects and ranks clusters by their labels and properties.
	// +optional
	ClusterAffinity *ClusterAffinity `json:"clusterAffinity,omitempty"`

	// PlacementAffinity places near other placements: on clusters in the same
	// topology domain as clusters they are on.
	// +optional
	PlacementAffinity *PlacementAffinity `json:"placementAffinity,omitempty"`

	// PlacementAntiAffinity places away from other placements: on clusters in a
	// topology domain none of their clusters are in.
	// +optional
	PlacementAntiAffinity *PlacementAntiAffinity `json:"placementAntiAffinity,omitempty"`
}

// ClusterAffinity selects and ranks clusters by their labels and properties.
type ClusterAffinity struct {
	// RequiredDuringSchedulingIgnoredDuringExecution must be met for a cluster to be
	// picked. A cluster that stops meeting it later keeps the resources.
	// +optional
	RequiredDuringSchedulingIgnoredDuringExecution *ClusterSelector `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`

	// PreferredDuringSchedulingIgnoredDuringExecution rank clusters (PickN): a
	// cluster scores the sum of the weights of the terms it matches.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	PreferredDuringSchedulingIgnoredDuringExecution []PreferredClusterSelector `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
}

// ClusterSelector selects clusters that match any of its terms. With no terms it
// selects every cluster.
//
// +kubebuilder:validation:XValidation:rule="!has(self.clusterSelectorTerms) || self.clusterSelectorTerms.all(t, !has(t.propertySorter))",message="propertySorter is only allowed in preferredDuringSchedulingIgnoredDuringExecution terms"
type ClusterSelector struct {
	// ClusterSelectorTerms are ORed.
	// +kubebuilder:validation:MaxItems=10
	// +optional
	ClusterSelectorTerms []ClusterSelectorTerm `json:"clusterSelectorTerms,omitempty"`
}

// ClusterSelectorTerm matches clusters by labels and properties; everything in a term
// is ANDed, and an empty term matches every cluster.
type ClusterSelectorTerm struct {
	// LabelSelector matches the cluster's labels.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`

	// PropertySelector matches the properties and resource usage the cluster reports.
	// +optional
	PropertySelector *PropertySelector `json:"propertySelector,omitempty"`

	// PropertySorter ranks clusters by a property, in a preferred term only: the
	// cluster with the best value gets the term's full weight and the others a share
	// in proportion.
	// +optional
	PropertySorter *PropertySorter `json:"propertySorter,omitempty"`
}

// PropertySelector matches clusters by the properties they report.
type PropertySelector struct {
	// MatchExpressions are ANDed.
	// +kubebuilder:validation:MaxItems=20
	// +required
	MatchExpressions []PropertySelectorRequirement `json:"matchExpressions"`
}

// PropertySelectorOperator compares a cluster property with a value.
// +kubebuilder:validation:Enum=Gt;Ge;Eq;Ne;Lt;Le
type PropertySelectorOperator string

const (
	// PropertySelectorGreaterThan matches when the property is greater than the value.
	PropertySelectorGreaterThan PropertySelectorOperator = "Gt"
	// PropertySelectorGreaterThanOrEqualTo matches when the property is greater than or
	// equal to the value.
	PropertySelectorGreaterThanOrEqualTo PropertySelectorOperator = "Ge"
	// PropertySelectorEqualTo matches when the property equals the value.
	PropertySelectorEqualTo PropertySelectorOperator = "Eq"
	// PropertySelectorNotEqualTo matches when the property differs from the value.
	PropertySelectorNotEqualTo PropertySelectorOperator = "Ne"
	// PropertySelectorLessThan matches when the property is less than the value.
	PropertySelectorLessThan PropertySelectorOperator = "Lt"
	// PropertySelectorLessThanOrEqualTo matches when the property is less than or equal
	// to the value.
	PropertySelectorLessThanOrEqualTo PropertySelectorOperator = "Le"
)

// PropertySelectorRequirement compares one cluster property with a value. A cluster
// that does not report the property does not match.
type PropertySelectorRequirement struct {
	// Name is the property, such as flotilla.io/node-count or
	// resources.flotilla.io/available-cpu.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +required
	Name string `json:"name"`

	// Operator is how the property is compared with the value.
	// +required
	Operator PropertySelectorOperator `json:"operator"`

	// Values holds exactly one value, a Kubernetes quantity such as "3" or "4Gi".
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1
	// +required
	Values []string `json:"values"`
}

// PropertySortOrder is the order in which a property ranks clusters.
// +kubebuilder:validation:Enum=Ascending;Descending
type PropertySortOrder string

const (
	// Ascending prefers clusters with smaller values.
	Ascending PropertySortOrder = "Ascending"
	// Descending prefers clusters with larger values.
	Descending PropertySortOrder = "Descending"
)

// PropertySorter ranks clusters by a property.
type PropertySorter struct {
	// Name is the property to sort by.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +required
	Name string `json:"name"`

	// SortOrder says whether smaller (Ascending) or larger (Descending) values are
	// preferred.
	// +required
	SortOrder PropertySortOrder `json:"sortOrder"`
}

// PreferredClusterSelector is a weighted cluster selector term.
type PreferredClusterSelector struct {
	// Weight is added to the score of matching clusters; a negative weight steers
	// the placement away from them.
	// +kubebuilder:validation:Minimum=-100
	// +kubebuilder:validation:Maximum=100
	// +required
	Weight int32 `json:"weight"`

	// Preference is the term clusters are matched (or sorted) by.
	// +required
	Preference ClusterSelectorTerm `json:"preference"`
}

// PlacementAffinity places near the clusters other placements are on.
type PlacementAffinity struct {
	// RequiredDuringSchedulingIgnoredDuringExecution terms must all be met: a cluster
	// is picked only if it shares a topology domain with a cluster that a matching
	// placement is on.
	// +kubebuilder:validation:MaxItems=10
	// +optional
	RequiredDuringSchedulingIgnoredDuringExecution []PlacementAffinityTerm `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`

	// PreferredDuringSchedulingIgnoredDuringExecution terms rank clusters (PickN): a
	// cluster scores the weights of the terms it meets.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	PreferredDuringSchedulingIgnoredDuringExecution []WeightedPlacementAffinityTerm `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
}

// PlacementAntiAffinity places away from the clusters other placements are on.
type PlacementAntiAffinity struct {
	// RequiredDuringSchedulingIgnoredDuringExecution terms must all be met: a cluster
	// is picked only if no cluster in its topology domain holds a matching placement.
	// +kubebuilder:validation:MaxItems=10
	// +optional
	RequiredDuringSchedulingIgnoredDuringExecution []PlacementAffinityTerm `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`

	// PreferredDuringSchedulingIgnoredDuringExecution terms rank clusters (PickN): a
	// cluster scores the weights of the terms it meets.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	PreferredDuringSchedulingIgnoredDuringExecution []WeightedPlacementAffinityTerm `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
}

// PlacementAffinityTerm selects other placements and the topology in which to be near
// to (or away from) them.
type PlacementAffinityTerm struct {
	// LabelSelector selects placements of the same kind by their labels; a
	// ResourcePlacement only considers placements in its own namespace. An empty
	// selector selects all of them; the placement never matches itself.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`

	// TopologyKey is the cluster label whose values are the topology domains, such as
	// cluster.flotilla.io/name (the same cluster) or a zone label.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +required
	TopologyKey string `json:"topologyKey"`
}

// WeightedPlacementAffinityTerm is a weighted placement affinity term.
type WeightedPlacementAffinityTerm struct {
	// Weight is added to the score of clusters that meet the term.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +required
	Weight int32 `json:"weight"`

	// PlacementAffinityTerm is the term.
	// +required
	PlacementAffinityTerm PlacementAffinityTerm `json:"placementAffinityTerm"`
}

// UnsatisfiableConstraintAction is what the scheduler does when a topology spread
// constraint cannot be met.
// +kubebuilder:validation:Enum=DoNotSchedule;ScheduleAnyway
type UnsatisfiableConstraintAction string

const (
	// DoNotSchedule leaves out clusters that would break the constraint.
	DoNotSchedule UnsatisfiableConstraintAction = "DoNotSchedule"
	// ScheduleAnyway still picks such clusters, preferring those that break it least.
	ScheduleAnyway UnsatisfiableConstraintAction = "ScheduleAnyway"
)

// TopologySpreadConstraint spreads the picked clusters over topology domains.
type TopologySpreadConstraint struct {
	// MaxSkew is the largest allowed difference between the number of picked clusters
	// in any two domains. At most 10000, the largest fleet Flotilla is built for.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	// +optional
	MaxSkew *int32 `json:"maxSkew,omitempty"`

	// TopologyKey is the cluster label whose values are the domains. Clusters without
	// the label are not picked.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +required
	TopologyKey string `json:"topologyKey"`

	// WhenUnsatisfiable is what to do when the constraint cannot be met.
	// +kubebuilder:default=DoNotSchedule
	// +optional
	WhenUnsatisfiable UnsatisfiableConstraintAction `json:"whenUnsatisfiable,omitempty"`
}

// TolerationOperator is how a toleration matches a taint's value.
// +kubebuilder:validation:Enum=Equal;Exists
type TolerationOperator string

const (
	// TolerationOpEqual matches taints with the same key and value.
	TolerationOpEqual TolerationOperator = "Equal"
	// TolerationOpExists matches taints with the same key, whatever their value; with
	// an empty key it matches every taint.
	TolerationOpExists TolerationOperator = "Exists"
)

// Toleration lets a placement use clusters whose taints it matches.
//
// +kubebuilder:validation:XValidation:rule="!has(self.operator) || self.operator != 'Exists' || !has(self.value) || size(self.value) == 0",message="a toleration with operator Exists must not have a value"
// +kubebuilder:validation:XValidation:rule="(has(self.key) && size(self.key) > 0) || (has(self.operator) && self.operator == 'Exists')",message="a toleration without a key must use operator Exists"
type Toleration struct {
	// Key is the taint key to match; empty (with operator Exists) matches every key.
	// +kubebuilder:validation:MaxLength=317
	// +optional
	Key string `json:"key,omitempty"`

	// Operator is how the value is matched.
	// +kubebuilder:default=Equal
	// +optional
	Operator TolerationOperator `json:"operator,omitempty"`

	// Value is the taint value to match, with operator Equal.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Value string `json:"value,omitempty"`

	// Effect is the taint effect to match; empty matches both NoSchedule and
	// NoExecute.
	// +optional
	Effect clusterv1beta1.TaintEffect `json:"effect,omitempty"`

	// TolerationSeconds is how long resources stay on a cluster after a matching
	// NoExecute taint is added (its timeAdded); unset means forever, and 0 means
	// the placement leaves at once. For each taint the first matching toleration
	// decides. At most 9223372036 (about 292 years, the longest duration the hub
	// can count).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=9223372036
	// +optional
	TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
}
