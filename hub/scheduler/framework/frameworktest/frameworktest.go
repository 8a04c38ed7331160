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

// Package frameworktest has builders and runners for testing scheduler plugins and
// the framework: a healthy member cluster in one line, and a plugin's pre-stage and
// stage run over a small world.
package frameworktest

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// Now is the time test clusters' conditions are measured against.
var Now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// ClusterOption changes a test cluster.
type ClusterOption func(*clusterv1beta1.MemberCluster)

// Cluster returns a member cluster that is joined, connected and healthy since an
// hour before Now, changed by opts.
func Cluster(name string, opts ...ClusterOption) clusterv1beta1.MemberCluster {
	since := metav1.NewTime(Now.Add(-time.Hour))
	mc := clusterv1beta1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: clusterv1beta1.MemberClusterStatus{Conditions: []metav1.Condition{
			{Type: clusterv1beta1.ConditionJoined, Status: metav1.ConditionTrue, Reason: clusterv1beta1.ReasonJoined, LastTransitionTime: since},
			{Type: clusterv1beta1.ConditionAgentConnected, Status: metav1.ConditionTrue, Reason: clusterv1beta1.ReasonAgentConnected, LastTransitionTime: since},
			{Type: clusterv1beta1.ConditionHealthy, Status: metav1.ConditionTrue, Reason: clusterv1beta1.ReasonHealthy, LastTransitionTime: since},
		}},
	}
	for _, o := range opts {
		o(&mc)
	}
	return mc
}

// Labels adds labels given as key, value, key, value...
func Labels(kv ...string) ClusterOption {
	return func(mc *clusterv1beta1.MemberCluster) {
		if mc.Labels == nil {
			mc.Labels = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			mc.Labels[kv[i]] = kv[i+1]
		}
	}
}

// LabelMap adds the labels of m.
func LabelMap(m map[string]string) ClusterOption {
	return func(mc *clusterv1beta1.MemberCluster) {
		for k, v := range m {
			Labels(k, v)(mc)
		}
	}
}

// Taints adds taints.
func Taints(taints ...clusterv1beta1.Taint) ClusterOption {
	return func(mc *clusterv1beta1.MemberCluster) { mc.Spec.Taints = append(mc.Spec.Taints, taints...) }
}

// Taint returns a taint.
func Taint(key, value string, effect clusterv1beta1.TaintEffect) clusterv1beta1.Taint {
	return clusterv1beta1.Taint{Key: key, Value: value, Effect: effect}
}

// StrictMatchLabels sets spec.strictMatchLabels.
func StrictMatchLabels() ClusterOption {
	return func(mc *clusterv1beta1.MemberCluster) { mc.Spec.StrictMatchLabels = true }
}

// Leaving marks the cluster as being deleted.
func Leaving() ClusterOption {
	return func(mc *clusterv1beta1.MemberCluster) {
		t := metav1.NewTime(Now.Add(-time.Minute))
		mc.DeletionTimestamp = &t
	}
}

// Condition sets a condition whose last transition was ago before Now.
func Condition(condType string, status metav1.ConditionStatus, ago time.Duration) ClusterOption {
	return func(mc *clusterv1beta1.MemberCluster) {
		c := metav1.Condition{Type: condType, Status: status, Reason: "Test", LastTransitionTime: metav1.NewTime(Now.Add(-ago))}
		for i := range mc.Status.Conditions {
			if mc.Status.Conditions[i].Type == condType {
				mc.Status.Conditions[i] = c
				return
			}
		}
		mc.Status.Conditions = append(mc.Status.Conditions, c)
	}
}

// WithoutCondition removes a condition.
func WithoutCondition(condType string) ClusterOption {
	return func(mc *clusterv1beta1.MemberCluster) {
		out := mc.Status.Conditions[:0]
		for _, c := range mc.Status.Conditions {
			if c.Type != condType {
				out = append(out, c)
			}
		}
		mc.Status.Conditions = out
	}
}

// Property sets a reported property.
func Property(name, value string) ClusterOption {
	return func(mc *clusterv1beta1.MemberCluster) {
		if mc.Status.Properties == nil {
			mc.Status.Properties = map[string]clusterv1beta1.PropertyValue{}
		}
		mc.Status.Properties[name] = clusterv1beta1.PropertyValue{Value: value}
	}
}

// AvailableCPU sets the available CPU in the cluster's resource usage.
func AvailableCPU(q string) ClusterOption {
	return func(mc *clusterv1beta1.MemberCluster) {
		if mc.Status.ResourceUsage.Available == nil {
			mc.Status.ResourceUsage.Available = corev1.ResourceList{}
		}
		mc.Status.ResourceUsage.Available[corev1.ResourceCPU] = resource.MustParse(q)
	}
}

// Resources sets the capacity, allocatable and available amounts of a resource.
func Resources(name corev1.ResourceName, capacity, allocatable, available string) ClusterOption {
	return func(mc *clusterv1beta1.MemberCluster) {
		u := &mc.Status.ResourceUsage
		for _, l := range []*corev1.ResourceList{&u.Capacity, &u.Allocatable, &u.Available} {
			if *l == nil {
				*l = corev1.ResourceList{}
			}
		}
		u.Capacity[name] = resource.MustParse(capacity)
		u.Allocatable[name] = resource.MustParse(allocatable)
		u.Available[name] = resource.MustParse(available)
	}
}

// Binding returns an active (Bound) binding of placement to cluster.
func Binding(placement, cluster string) *placementv1beta1.ClusterResourceBinding {
	return BindingInState(placement, cluster, placementv1beta1.BindingStateBound)
}

// BindingInState returns a binding of placement to cluster in the state.
func BindingInState(placement, cluster string, state placementv1beta1.BindingState) *placementv1beta1.ClusterResourceBinding {
	return &placementv1beta1.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{
			Name:   placement + "-" + cluster,
			Labels: map[string]string{placementv1beta1.LabelPlacementName: placement},
		},
		Spec: placementv1beta1.ResourceBindingSpec{State: state, TargetCluster: cluster},
	}
}

// Bindings returns an active binding of placement to each cluster.
func Bindings(placement string, clusters ...string) []placementv1beta1.BindingObj {
	out := make([]placementv1beta1.BindingObj, 0, len(clusters))
	for _, c := range clusters {
		out = append(out, Binding(placement, c))
	}
	return out
}

// Input returns a cycle input for placement "test" over clusters at Now.
func Input(policy *placementv1beta1.PlacementPolicy, clusters ...clusterv1beta1.MemberCluster) framework.CycleInput {
	return framework.CycleInput{PlacementName: "test", Policy: policy, Clusters: clusters, Now: Now}
}

// RunFilter runs the plugin's PreFilter (if it has one) over all clusters of in,
// then its Filter on each, as the framework would. It returns the status per
// cluster: the PreFilter's rejection for all clusters if it rejected, nil for all
// if it returned Skip, the PreFilterResult's reason (as ClusterMismatch) for the
// clusters it left out. It fails the test on an error status.
func RunFilter(t testing.TB, p framework.Plugin, in framework.CycleInput) map[string]*framework.Status {
	t.Helper()
	return RunFilterInState(t, p, framework.NewCycleState(&in), in.Policy)
}

// RunFilterInState is RunFilter with a prepared state.
func RunFilterInState(t testing.TB, p framework.Plugin, state *framework.CycleState, policy *placementv1beta1.PlacementPolicy) map[string]*framework.Status {
	t.Helper()
	ctx := context.Background()
	out := map[string]*framework.Status{}
	clusters := state.Clusters()
	for _, c := range clusters {
		out[c.Name] = nil
	}
	view := clusters
	if pf, ok := p.(framework.PreFilterPlugin); ok {
		res, st := pf.PreFilter(ctx, state, policy, clusters)
		switch {
		case st.IsError():
			t.Fatalf("PreFilter() = %v", st)
		case st.IsSkip():
			return out
		case st.IsRejection():
			for _, c := range clusters {
				out[c.Name] = st
			}
			return out
		}
		if res != nil && res.Includes != nil {
			view = nil
			for _, c := range clusters {
				if res.Includes(c) {
					view = append(view, c)
				} else {
					out[c.Name] = framework.NewStatus(framework.ClusterMismatch, res.Reason)
				}
			}
		}
	}
	f, ok := p.(framework.FilterPlugin)
	if !ok {
		return out
	}
	for _, c := range view {
		st := f.Filter(ctx, state, policy, c)
		if st.IsError() {
			t.Fatalf("Filter(%s) = %v", c.Name, st)
		}
		out[c.Name] = st
	}
	return out
}

// RunScore runs the plugin's PreScore (if it has one) over all clusters of in,
// then its Score on each. A PreScore Skip yields zero scores. It fails the test on
// an error status.
func RunScore(t testing.TB, p framework.Plugin, in framework.CycleInput) map[string]framework.ClusterScore {
	t.Helper()
	ctx := context.Background()
	state := framework.NewCycleState(&in)
	out := map[string]framework.ClusterScore{}
	clusters := state.Clusters()
	for _, c := range clusters {
		out[c.Name] = framework.ClusterScore{}
	}
	if ps, ok := p.(framework.PreScorePlugin); ok {
		st := ps.PreScore(ctx, state, in.Policy, clusters)
		if st.IsError() {
			t.Fatalf("PreScore() = %v", st)
		}
		if st.IsSkip() {
			return out
		}
	}
	for _, c := range clusters {
		s, st := p.(framework.ScorePlugin).Score(ctx, state, in.Policy, c)
		if !st.IsSuccess() {
			t.Fatalf("Score(%s) = %v", c.Name, st)
		}
		out[c.Name] = s
	}
	return out
}

// Codes returns the code of each status, for comparing with cmp.Diff.
func Codes(statuses map[string]*framework.Status) map[string]string {
	out := make(map[string]string, len(statuses))
	for k, st := range statuses {
		out[k] = st.Code().String()
	}
	return out
}

// Ptr returns a pointer to v.
func Ptr[T any](v T) *T { return &v }
