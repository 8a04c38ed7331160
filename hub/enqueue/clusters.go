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

package enqueue

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// healthConditions are the MemberCluster conditions scheduling and failover read.
var healthConditions = []string{clusterv1beta1.ConditionJoined, clusterv1beta1.ConditionAgentConnected, clusterv1beta1.ConditionHealthy}

// TaintsChanged reports whether a MemberCluster update changed its taints.
func TaintsChanged(o, n *clusterv1beta1.MemberCluster) bool {
	return !equality.Semantic.DeepEqual(o.Spec.Taints, n.Spec.Taints)
}

// HealthChanged reports whether a MemberCluster update changed the status of its
// Joined, AgentConnected or Healthy condition, or started its deletion.
func HealthChanged(o, n *clusterv1beta1.MemberCluster) bool {
	if o.DeletionTimestamp.IsZero() != n.DeletionTimestamp.IsZero() {
		return true
	}
	for _, t := range healthConditions {
		oc, nc := conditions.Get(o.Status.Conditions, t), conditions.Get(n.Status.Conditions, t)
		if (oc == nil) != (nc == nil) || (oc != nil && oc.Status != nc.Status) {
			return true
		}
	}
	return false
}

// ClusterChange is what a MemberCluster update changed of what placements select on.
type ClusterChange struct {
	// Placement is true when the change may matter to any placement: labels,
	// taints, strictMatchLabels, health conditions or deletion.
	Placement bool
	// Properties are the names of the properties whose values changed (reported
	// properties and those derived from resource usage); only placements that
	// select or sort on one of them care.
	Properties []string
}

// IsZero reports a change no placement cares about (a heartbeat refresh).
func (c ClusterChange) IsZero() bool { return !c.Placement && len(c.Properties) == 0 }

// DiffCluster classifies a MemberCluster update for the scheduler.
func DiffCluster(o, n *clusterv1beta1.MemberCluster) ClusterChange {
	if !equality.Semantic.DeepEqual(o.Labels, n.Labels) || TaintsChanged(o, n) || o.Spec.StrictMatchLabels != n.Spec.StrictMatchLabels || HealthChanged(o, n) {
		return ClusterChange{Placement: true}
	}
	var props []string
	for name, p := range n.Status.Properties {
		if op, ok := o.Status.Properties[name]; !ok || op.Value != p.Value {
			props = append(props, name)
		}
	}
	for name := range o.Status.Properties {
		if _, ok := n.Status.Properties[name]; !ok {
			props = append(props, name)
		}
	}
	ou, nu := &o.Status.ResourceUsage, &n.Status.ResourceUsage
	if !equality.Semantic.DeepEqual(ou.Capacity, nu.Capacity) {
		props = append(props, clusterv1beta1.PropertyTotalCPU, clusterv1beta1.PropertyTotalMemory)
	}
	if !equality.Semantic.DeepEqual(ou.Allocatable, nu.Allocatable) {
		props = append(props, clusterv1beta1.PropertyAllocatableCPU, clusterv1beta1.PropertyAllocatableMemory)
	}
	if !equality.Semantic.DeepEqual(ou.Available, nu.Available) {
		props = append(props, clusterv1beta1.PropertyAvailableCPU, clusterv1beta1.PropertyAvailableMemory)
	}
	return ClusterChange{Properties: props}
}

// UsesProperty reports whether a placement's policy selects or sorts clusters by
// any of the named properties.
func UsesProperty(policy *placementv1beta1.PlacementPolicy, names []string) bool {
	if policy == nil || policy.Affinity == nil || policy.Affinity.ClusterAffinity == nil || len(names) == 0 {
		return false
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	ca := policy.Affinity.ClusterAffinity
	if req := ca.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
		for _, t := range req.ClusterSelectorTerms {
			if t.PropertySelector == nil {
				continue
			}
			for _, e := range t.PropertySelector.MatchExpressions {
				if want[e.Name] {
					return true
				}
			}
		}
	}
	for _, p := range ca.PreferredDuringSchedulingIgnoredDuringExecution {
		if ps := p.Preference.PropertySelector; ps != nil {
			for _, e := range ps.MatchExpressions {
				if want[e.Name] {
					return true
				}
			}
		}
		if s := p.Preference.PropertySorter; s != nil && want[s.Name] {
			return true
		}
	}
	return false
}

// OverrideInputsChanged passes MemberCluster updates that can change which
// override rules select the cluster and the values of override variables: its
// labels and its property values. Creations and deletions do not pass.
func OverrideInputsChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		DeleteFunc: func(event.DeleteEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*clusterv1beta1.MemberCluster)
			n, ok2 := e.ObjectNew.(*clusterv1beta1.MemberCluster)
			if !ok1 || !ok2 {
				return false
			}
			return !equality.Semantic.DeepEqual(o.Labels, n.Labels) || len(DiffCluster(o, n).Properties) > 0
		},
	}
}

// AgentConnectedChanged passes MemberCluster updates that change the status of
// its AgentConnected condition: the per-cluster Applied and Available of every
// placement on it turn Unknown (AgentDisconnected) or back.
func AgentConnectedChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*clusterv1beta1.MemberCluster)
			n, ok2 := e.ObjectNew.(*clusterv1beta1.MemberCluster)
			if !ok1 || !ok2 {
				return false
			}
			oc := conditions.Get(o.Status.Conditions, clusterv1beta1.ConditionAgentConnected)
			nc := conditions.Get(n.Status.Conditions, clusterv1beta1.ConditionAgentConnected)
			return (oc == nil) != (nc == nil) || (oc != nil && oc.Status != nc.Status)
		},
	}
}
