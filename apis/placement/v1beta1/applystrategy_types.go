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

// This file holds the apply and delete strategies, shared by placements (through
// RolloutStrategy), bindings and Works.

// ApplyStrategyType is how the agent applies resources on a member cluster.
// +kubebuilder:validation:Enum=ServerSideApply;ClientSideApply;ReportDiff
type ApplyStrategyType string

const (
	// ApplyStrategyTypeServerSideApply applies with server-side apply, as the Flotilla
	// field manager.
	ApplyStrategyTypeServerSideApply ApplyStrategyType = "ServerSideApply"
	// ApplyStrategyTypeClientSideApply applies with a three-way merge between the
	// configuration last applied (kept in an annotation on the object, as kubectl
	// apply does), the hub's object and the member's, so that fields others set on
	// the member survive and fields the hub dropped are removed.
	ApplyStrategyTypeClientSideApply ApplyStrategyType = "ClientSideApply"
	// ApplyStrategyTypeReportDiff changes nothing on the member cluster and reports how
	// the resources there differ from the hub.
	ApplyStrategyTypeReportDiff ApplyStrategyType = "ReportDiff"
)

// WhenToTakeOver is what the agent does with a resource that already exists on the
// member cluster and was not created by Flotilla.
// +kubebuilder:validation:Enum=Always;IfNoDiff;Never
type WhenToTakeOver string

const (
	// WhenToTakeOverAlways takes the resource over and overwrites it with the hub's.
	WhenToTakeOverAlways WhenToTakeOver = "Always"
	// WhenToTakeOverIfNoDiff takes the resource over only if it does not differ from
	// the hub's (as compared by comparisonOption); otherwise it is reported as not
	// taken over.
	WhenToTakeOverIfNoDiff WhenToTakeOver = "IfNoDiff"
	// WhenToTakeOverNever never takes over existing resources; they are reported as
	// not taken over.
	WhenToTakeOverNever WhenToTakeOver = "Never"
)

// ComparisonOption is which fields are compared when looking for differences.
// +kubebuilder:validation:Enum=PartialComparison;FullComparison
type ComparisonOption string

const (
	// PartialComparison compares only the fields set on the hub.
	PartialComparison ComparisonOption = "PartialComparison"
	// FullComparison compares every field, so fields set only on the member cluster
	// count as differences too.
	FullComparison ComparisonOption = "FullComparison"
)

// ApplyStrategy is how the agent applies resources on a member cluster.
//
// +kubebuilder:validation:XValidation:rule="!has(self.serverSideApplyConfig) || !has(self.type) || self.type == 'ServerSideApply'",message="serverSideApplyConfig can only be set when type is ServerSideApply"
type ApplyStrategy struct {
	// Type is how resources are applied.
	// +kubebuilder:default=ServerSideApply
	// +optional
	Type ApplyStrategyType `json:"type,omitempty"`

	// WhenToApply is what to do when an applied resource is changed on the member
	// cluster in a field the hub manages: Always reverts it, IfNotDrifted leaves it
	// and reports the drift. Not used by type ReportDiff, which changes nothing.
	// +kubebuilder:default=Always
	// +optional
	WhenToApply WhenToApply `json:"whenToApply,omitempty"`

	// WhenToTakeOver is what to do with resources that already exist on the member
	// cluster and were not created by Flotilla. The default, IfNoDiff, takes over
	// only those that already match the hub and reports the others.
	// +kubebuilder:default=IfNoDiff
	// +optional
	WhenToTakeOver WhenToTakeOver `json:"whenToTakeOver,omitempty"`

	// ComparisonOption is which fields are compared when looking for differences
	// and drifts (whenToTakeOver IfNoDiff, whenToApply, and type ReportDiff):
	// PartialComparison compares the fields the hub sets, FullComparison the whole
	// object except its status and the metadata the member's API server sets.
	// +kubebuilder:default=PartialComparison
	// +optional
	ComparisonOption ComparisonOption `json:"comparisonOption,omitempty"`

	// AllowCoOwnership lets Flotilla apply resources that are also owned by something
	// else on the member cluster (they have other owner references). When false such
	// resources are reported as failed.
	// +optional
	AllowCoOwnership bool `json:"allowCoOwnership,omitempty"`

	// ServerSideApplyConfig configures the ServerSideApply type.
	// +optional
	ServerSideApplyConfig *ServerSideApplyConfig `json:"serverSideApplyConfig,omitempty"`
}

// ServerSideApplyConfig configures server-side apply.
type ServerSideApplyConfig struct {
	// Force is whether applying takes the fields that another field manager on
	// the member cluster owns (a controller, or a kubectl edit):
	//   - unset (the default): the fields of the objects the Work already applied
	//     are taken, so the hub's values win and a drift is reverted; an object
	//     taken over with whenToTakeOver IfNoDiff already matches the hub, and its
	//     fields are shared with their managers;
	//   - true: taken on every object;
	//   - false: left to their managers. A manifest that sets such a field to
	//     another value is not applied (Applied=False, reason ApplyFailed, with a
	//     message naming the fields and their managers) until the field is
	//     removed from the manifest or its manager lets it go.
	// whenToTakeOver Always takes every field of an object it takes over,
	// whatever Force says.
	// +optional
	Force *bool `json:"force,omitempty"`
}

// DeletePropagationPolicy is what happens to placed resources when they are removed
// from a cluster.
// +kubebuilder:validation:Enum=Delete;Abandon
type DeletePropagationPolicy string

const (
	// DeletePropagationPolicyDelete deletes the resources from the member cluster.
	DeletePropagationPolicyDelete DeletePropagationPolicy = "Delete"
	// DeletePropagationPolicyAbandon leaves the resources on the member cluster and
	// stops managing them.
	DeletePropagationPolicyAbandon DeletePropagationPolicy = "Abandon"
)

// DeleteStrategy is what happens to placed resources when they are removed from a
// cluster, because the placement or its selection changed or the placement was deleted.
type DeleteStrategy struct {
	// PropagationPolicy is whether the resources are deleted or abandoned.
	// +kubebuilder:default=Delete
	// +optional
	PropagationPolicy DeletePropagationPolicy `json:"propagationPolicy,omitempty"`

	// TakenOver is what happens, when propagationPolicy is Delete, to the objects
	// that already existed on the member cluster when the placement first applied
	// them (it took them over, see ApplyStrategy.WhenToTakeOver): Release (the
	// default) leaves them on the member and takes Flotilla's annotation, labels and
	// field ownership off; Delete deletes them like the objects Flotilla created. A
	// Namespace that holds objects no placement applied is never deleted, whatever
	// this says: it is released. Empty means Release; it has no CRD default so
	// that an upgrade changes no stored placement's or Work's spec (and sends no
	// Work again).
	// +optional
	TakenOver TakenOverPolicy `json:"takenOver,omitempty"`
}

// TakenOverPolicy is what happens to an object a placement took over (it existed on
// the member cluster before the placement applied it) when the placement removes
// it from the cluster.
// +kubebuilder:validation:Enum=Release;Delete
type TakenOverPolicy string

const (
	// TakenOverPolicyRelease leaves the object on the member cluster and stops
	// managing it.
	TakenOverPolicyRelease TakenOverPolicy = "Release"
	// TakenOverPolicyDelete deletes the object from the member cluster.
	TakenOverPolicyDelete TakenOverPolicy = "Delete"
)
