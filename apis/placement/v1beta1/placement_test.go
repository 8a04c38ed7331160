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

package v1beta1_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// placementKind makes placements of one kind; the placement tests run for both kinds,
// as they share their spec and its validation.
type placementKind struct {
	name     string
	resource string
	// new makes a placement of the kind with spec, scoped first.
	new func(spec placementv1beta1.PlacementSpec) placementv1beta1.PlacementObj
	// scoped turns a shared test spec into one of the kind's scope (the same spec
	// for a ClusterResourcePlacement).
	scoped func(spec placementv1beta1.PlacementSpec) placementv1beta1.PlacementSpec
	// refusal is what the kind alone refuses in a spec, or "".
	refusal func(spec placementv1beta1.PlacementSpec) string
}

var placementKinds = []placementKind{
	{
		name:     "ClusterResourcePlacement",
		resource: "clusterresourceplacements",
		new: func(spec placementv1beta1.PlacementSpec) placementv1beta1.PlacementObj {
			return &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{GenerateName: "crp-"}, Spec: spec}
		},
		scoped:  func(spec placementv1beta1.PlacementSpec) placementv1beta1.PlacementSpec { return spec },
		refusal: func(placementv1beta1.PlacementSpec) string { return "" },
	},
	{
		name:     "ResourcePlacement",
		resource: "resourceplacements",
		new: func(spec placementv1beta1.PlacementSpec) placementv1beta1.PlacementObj {
			return &placementv1beta1.ResourcePlacement{ObjectMeta: metav1.ObjectMeta{GenerateName: "rp-", Namespace: testNamespace}, Spec: resourcePlacementScoped(spec)}
		},
		scoped: resourcePlacementScoped,
		refusal: func(spec placementv1beta1.PlacementSpec) string {
			switch {
			case spec.ReportBack != "":
				return "reportBack is for ClusterResourcePlacements only"
			case spec.Strategy.Type == placementv1beta1.ExternalRolloutStrategyType:
				return "strategy type External (staged update runs) is for ClusterResourcePlacements only"
			}
			return ""
		},
	},
}

// resourcePlacementScoped turns a shared test spec into a ResourcePlacement's: a
// ResourcePlacement selects objects of its namespace (a ConfigMap instead of a
// Namespace of the same name) and rolls out itself (strategy type External is for
// ClusterResourcePlacements only; the refusal is tested on its own).
func resourcePlacementScoped(spec placementv1beta1.PlacementSpec) placementv1beta1.PlacementSpec {
	out := *spec.DeepCopy()
	for i, s := range out.ResourceSelectors {
		if s.Group == "" && s.Kind == "Namespace" {
			out.ResourceSelectors[i].Kind = "ConfigMap"
		}
	}
	if out.Strategy.Type == placementv1beta1.ExternalRolloutStrategyType {
		out.Strategy.Type = placementv1beta1.RollingUpdateRolloutStrategyType
	}
	return out
}

func namespaceSelector(name string) placementv1beta1.ResourceSelector {
	return placementv1beta1.ResourceSelector{Version: "v1", Kind: "Namespace", Name: name}
}

// spec returns a placement spec that selects one namespace, with policy.
func spec(policy *placementv1beta1.PlacementPolicy) placementv1beta1.PlacementSpec {
	return placementv1beta1.PlacementSpec{
		ResourceSelectors: []placementv1beta1.ResourceSelector{namespaceSelector("app")},
		Policy:            policy,
	}
}

func pickAll() *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAll}
}

func pickN(n int32) *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To(n)}
}

func pickFixed(clusters ...string) *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: clusters}
}

// with returns policy after applying change to it.
func with(policy *placementv1beta1.PlacementPolicy, change func(*placementv1beta1.PlacementPolicy)) *placementv1beta1.PlacementPolicy {
	change(policy)
	return policy
}

func requiredAffinity(terms ...placementv1beta1.ClusterSelectorTerm) *placementv1beta1.Affinity {
	return &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: terms},
	}}
}

func preferredAffinity(weight int32, term placementv1beta1.ClusterSelectorTerm) *placementv1beta1.Affinity {
	return &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []placementv1beta1.PreferredClusterSelector{{Weight: weight, Preference: term}},
	}}
}

func labelTerm(key, value string) placementv1beta1.ClusterSelectorTerm {
	return placementv1beta1.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{key: value}}}
}

func toleration(key, value string) placementv1beta1.Toleration {
	return placementv1beta1.Toleration{Key: key, Value: value, Effect: clusterv1beta1.TaintEffectNoSchedule}
}

func TestPlacementDefaults(t *testing.T) {
	defaultStrategy := placementv1beta1.RolloutStrategy{
		Type: placementv1beta1.RollingUpdateRolloutStrategyType,
		RollingUpdate: &placementv1beta1.RollingUpdateConfig{
			MaxUnavailable:           ptr.To(intstr.FromString("25%")),
			MaxSurge:                 ptr.To(intstr.FromString("25%")),
			UnavailablePeriodSeconds: ptr.To[int32](60),
		},
		ApplyStrategy: &placementv1beta1.ApplyStrategy{
			Type:             placementv1beta1.ApplyStrategyTypeServerSideApply,
			WhenToApply:      placementv1beta1.WhenToApplyAlways,
			WhenToTakeOver:   placementv1beta1.WhenToTakeOverIfNoDiff,
			ComparisonOption: placementv1beta1.PartialComparison,
		},
		DeleteStrategy: &placementv1beta1.DeleteStrategy{PropagationPolicy: placementv1beta1.DeletePropagationPolicyDelete},
	}
	tests := []struct {
		name string
		spec placementv1beta1.PlacementSpec
		want placementv1beta1.PlacementSpec
	}{
		{
			name: "a placement without policy or strategy picks all clusters with a rolling update",
			spec: spec(nil),
			want: placementv1beta1.PlacementSpec{
				ResourceSelectors:    []placementv1beta1.ResourceSelector{namespaceSelector("app")},
				Policy:               pickAll(),
				Strategy:             defaultStrategy,
				RevisionHistoryLimit: ptr.To[int32](10),
			},
		},
		{
			name: "topology spread constraints and tolerations get their defaults",
			spec: spec(with(pickN(2), func(p *placementv1beta1.PlacementPolicy) {
				p.TopologySpreadConstraints = []placementv1beta1.TopologySpreadConstraint{{TopologyKey: "zone"}}
				p.Tolerations = []placementv1beta1.Toleration{{Key: "maintenance", Value: "true"}}
			})),
			want: placementv1beta1.PlacementSpec{
				ResourceSelectors: []placementv1beta1.ResourceSelector{namespaceSelector("app")},
				Policy: with(pickN(2), func(p *placementv1beta1.PlacementPolicy) {
					p.TopologySpreadConstraints = []placementv1beta1.TopologySpreadConstraint{{
						MaxSkew:           ptr.To[int32](1),
						TopologyKey:       "zone",
						WhenUnsatisfiable: placementv1beta1.DoNotSchedule,
					}}
					p.Tolerations = []placementv1beta1.Toleration{{Key: "maintenance", Operator: placementv1beta1.TolerationOpEqual, Value: "true"}}
				}),
				Strategy:             defaultStrategy,
				RevisionHistoryLimit: ptr.To[int32](10),
			},
		},
		{
			name: "set fields are kept",
			spec: placementv1beta1.PlacementSpec{
				ResourceSelectors: []placementv1beta1.ResourceSelector{namespaceSelector("app")},
				SchedulerName:     "external",
				Policy:            pickFixed("member-1"),
				Strategy: placementv1beta1.RolloutStrategy{
					Type: placementv1beta1.ExternalRolloutStrategyType,
					RollingUpdate: &placementv1beta1.RollingUpdateConfig{
						MaxUnavailable: ptr.To(intstr.FromInt32(1)),
					},
					ApplyStrategy: &placementv1beta1.ApplyStrategy{
						Type:                  placementv1beta1.ApplyStrategyTypeServerSideApply,
						WhenToApply:           placementv1beta1.WhenToApplyIfNotDrifted,
						WhenToTakeOver:        placementv1beta1.WhenToTakeOverIfNoDiff,
						ComparisonOption:      placementv1beta1.FullComparison,
						AllowCoOwnership:      true,
						ServerSideApplyConfig: &placementv1beta1.ServerSideApplyConfig{Force: ptr.To(true)},
					},
					DeleteStrategy: &placementv1beta1.DeleteStrategy{PropagationPolicy: placementv1beta1.DeletePropagationPolicyAbandon},
				},
				RevisionHistoryLimit: ptr.To[int32](3),
			},
			want: placementv1beta1.PlacementSpec{
				ResourceSelectors: []placementv1beta1.ResourceSelector{namespaceSelector("app")},
				SchedulerName:     "external",
				Policy:            pickFixed("member-1"),
				Strategy: placementv1beta1.RolloutStrategy{
					Type: placementv1beta1.ExternalRolloutStrategyType,
					RollingUpdate: &placementv1beta1.RollingUpdateConfig{
						MaxUnavailable:           ptr.To(intstr.FromInt32(1)),
						MaxSurge:                 ptr.To(intstr.FromString("25%")),
						UnavailablePeriodSeconds: ptr.To[int32](60),
					},
					ApplyStrategy: &placementv1beta1.ApplyStrategy{
						Type:                  placementv1beta1.ApplyStrategyTypeServerSideApply,
						WhenToApply:           placementv1beta1.WhenToApplyIfNotDrifted,
						WhenToTakeOver:        placementv1beta1.WhenToTakeOverIfNoDiff,
						ComparisonOption:      placementv1beta1.FullComparison,
						AllowCoOwnership:      true,
						ServerSideApplyConfig: &placementv1beta1.ServerSideApplyConfig{Force: ptr.To(true)},
					},
					DeleteStrategy: &placementv1beta1.DeleteStrategy{PropagationPolicy: placementv1beta1.DeletePropagationPolicyAbandon},
				},
				RevisionHistoryLimit: ptr.To[int32](3),
			},
		},
	}
	for _, kind := range placementKinds {
		for _, tc := range tests {
			t.Run(kind.name+"/"+tc.name, func(t *testing.T) {
				p := kind.new(tc.spec)
				if err := env.Client.Create(context.Background(), p); err != nil {
					t.Fatalf("failed to create the placement: %v", err)
				}
				if diff := cmp.Diff(kind.scoped(tc.want), *p.GetPlacementSpec()); diff != "" {
					t.Errorf("spec after defaulting (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestPlacementValidation(t *testing.T) {
	tests := []struct {
		name        string
		spec        placementv1beta1.PlacementSpec
		wantRefusal string
	}{
		{
			name: "a PickFixed placement with distinct cluster names is accepted",
			spec: spec(pickFixed("member-1", "member-2")),
		},
		{
			name: "a PickN placement with affinity, topology spread, locations and tolerations is accepted",
			spec: spec(with(pickN(2), func(p *placementv1beta1.PlacementPolicy) {
				p.LocationSelectors = []metav1.LabelSelector{{MatchLabels: map[string]string{"cloud": "aws"}}}
				p.Affinity = &placementv1beta1.Affinity{
					ClusterAffinity: &placementv1beta1.ClusterAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{
							ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{
								LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}},
								PropertySelector: &placementv1beta1.PropertySelector{MatchExpressions: []placementv1beta1.PropertySelectorRequirement{{
									Name: clusterv1beta1.PropertyNodeCount, Operator: placementv1beta1.PropertySelectorGreaterThanOrEqualTo, Values: []string{"3"},
								}}},
							}},
						},
						PreferredDuringSchedulingIgnoredDuringExecution: []placementv1beta1.PreferredClusterSelector{
							{Weight: 100, Preference: placementv1beta1.ClusterSelectorTerm{PropertySorter: &placementv1beta1.PropertySorter{
								Name: clusterv1beta1.PropertyAvailableCPU, SortOrder: placementv1beta1.Descending,
							}}},
							{Weight: -100, Preference: labelTerm("tier", "slow")},
						},
					},
					PlacementAffinity: &placementv1beta1.PlacementAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: []placementv1beta1.PlacementAffinityTerm{{
							LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "back-end"}},
							TopologyKey:   clusterv1beta1.LabelClusterName,
						}},
					},
					PlacementAntiAffinity: &placementv1beta1.PlacementAntiAffinity{
						PreferredDuringSchedulingIgnoredDuringExecution: []placementv1beta1.WeightedPlacementAffinityTerm{{
							Weight:                50,
							PlacementAffinityTerm: placementv1beta1.PlacementAffinityTerm{TopologyKey: "zone"},
						}},
					},
				}
				p.TopologySpreadConstraints = []placementv1beta1.TopologySpreadConstraint{{TopologyKey: "zone", WhenUnsatisfiable: placementv1beta1.ScheduleAnyway}}
				p.Tolerations = []placementv1beta1.Toleration{
					{Key: "maintenance", Operator: placementv1beta1.TolerationOpEqual, Value: "true", Effect: clusterv1beta1.TaintEffectNoSchedule, TolerationSeconds: ptr.To[int64](300)},
					{Operator: placementv1beta1.TolerationOpExists},
				}
			})),
		},
		{
			name: "a PickN placement of zero clusters is accepted",
			spec: spec(pickN(0)),
		},
		{
			name: "a PickAll placement with a required affinity is accepted",
			spec: spec(with(pickAll(), func(p *placementv1beta1.PlacementPolicy) { p.Affinity = requiredAffinity(labelTerm("env", "dev")) })),
		},
		{
			name:        "a PickFixed placement without cluster names is refused",
			spec:        spec(pickFixed()),
			wantRefusal: "placementType PickFixed requires clusterNames",
		},
		{
			name:        "cluster names on a PickN placement are refused",
			spec:        spec(with(pickN(1), func(p *placementv1beta1.PlacementPolicy) { p.ClusterNames = []string{"member-1"} })),
			wantRefusal: "clusterNames can only be set when placementType is PickFixed",
		},
		{
			name:        "cluster names on a placement of the default type are refused",
			spec:        spec(&placementv1beta1.PlacementPolicy{ClusterNames: []string{"member-1"}}),
			wantRefusal: "clusterNames can only be set when placementType is PickFixed",
		},
		{
			name:        "a cluster named twice is refused",
			spec:        spec(pickFixed("member-1", "member-2", "member-1")),
			wantRefusal: "clusterNames must be unique",
		},
		{
			name:        "a PickN placement without numberOfClusters is refused",
			spec:        spec(&placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN}),
			wantRefusal: "placementType PickN requires numberOfClusters",
		},
		{
			name:        "numberOfClusters on a PickAll placement is refused",
			spec:        spec(with(pickAll(), func(p *placementv1beta1.PlacementPolicy) { p.NumberOfClusters = ptr.To[int32](2) })),
			wantRefusal: "numberOfClusters can only be set when placementType is PickN",
		},
		{
			name:        "availability-driven eviction on a PickAll placement is refused",
			spec:        spec(with(pickAll(), func(p *placementv1beta1.PlacementPolicy) { p.UnavailableEvictionSeconds = ptr.To[int32](60) })),
			wantRefusal: "unavailableEvictionSeconds can only be set when placementType is PickN",
		},
		{
			name:        "availability-driven eviction sooner than 10s is refused",
			spec:        spec(with(pickN(1), func(p *placementv1beta1.PlacementPolicy) { p.UnavailableEvictionSeconds = ptr.To[int32](5) })),
			wantRefusal: "unavailableEvictionSeconds",
		},
		{
			name:        "a negative numberOfClusters is refused",
			spec:        spec(pickN(-1)),
			wantRefusal: "spec.policy.numberOfClusters in body should be greater than or equal to 0",
		},
		{
			name:        "an unknown placement type is refused",
			spec:        spec(&placementv1beta1.PlacementPolicy{PlacementType: "PickSome"}),
			wantRefusal: `spec.policy.placementType: Unsupported value: "PickSome"`,
		},
		{
			name:        "affinity on a PickFixed placement is refused",
			spec:        spec(with(pickFixed("member-1"), func(p *placementv1beta1.PlacementPolicy) { p.Affinity = requiredAffinity(labelTerm("env", "dev")) })),
			wantRefusal: "affinity cannot be set when placementType is PickFixed",
		},
		{
			name: "location selectors on a PickFixed placement are refused",
			spec: spec(with(pickFixed("member-1"), func(p *placementv1beta1.PlacementPolicy) {
				p.LocationSelectors = []metav1.LabelSelector{{MatchLabels: map[string]string{"cloud": "aws"}}}
			})),
			wantRefusal: "locationSelectors cannot be set when placementType is PickFixed",
		},
		{
			name: "topology spread constraints on a PickAll placement are refused",
			spec: spec(with(pickAll(), func(p *placementv1beta1.PlacementPolicy) {
				p.TopologySpreadConstraints = []placementv1beta1.TopologySpreadConstraint{{TopologyKey: "zone"}}
			})),
			wantRefusal: "topologySpreadConstraints can only be set when placementType is PickN",
		},
		{
			name: "a maxSkew of zero is refused",
			spec: spec(with(pickN(2), func(p *placementv1beta1.PlacementPolicy) {
				p.TopologySpreadConstraints = []placementv1beta1.TopologySpreadConstraint{{TopologyKey: "zone", MaxSkew: ptr.To[int32](0)}}
			})),
			wantRefusal: "spec.policy.topologySpreadConstraints[0].maxSkew in body should be greater than or equal to 1",
		},
		{
			name: "ordered cluster preferences on a PickN placement are accepted, an empty selector last",
			spec: spec(with(pickN(1), func(p *placementv1beta1.PlacementPolicy) {
				p.ClusterPreferences = []placementv1beta1.ClusterPreference{
					{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": "primary"}}},
					{LabelSelector: metav1.LabelSelector{}},
				}
			})),
		},
		{
			name: "cluster preferences on a PickAll placement are refused",
			spec: spec(with(pickAll(), func(p *placementv1beta1.PlacementPolicy) {
				p.ClusterPreferences = []placementv1beta1.ClusterPreference{{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": "primary"}}}}
			})),
			wantRefusal: "clusterPreferences can only be set when placementType is PickN",
		},
		{
			name: "more than 10 cluster preferences are refused",
			spec: spec(with(pickN(1), func(p *placementv1beta1.PlacementPolicy) {
				for i := range 11 {
					p.ClusterPreferences = append(p.ClusterPreferences, placementv1beta1.ClusterPreference{
						LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": fmt.Sprint(i)}}})
				}
			})),
			wantRefusal: "spec.policy.clusterPreferences: Too many: 11: must have at most 10 items",
		},
		{
			name: "failback on a PickN placement with cluster preferences is accepted",
			spec: spec(with(pickN(1), func(p *placementv1beta1.PlacementPolicy) {
				p.ClusterPreferences = []placementv1beta1.ClusterPreference{{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": "primary"}}}}
				p.Failback = &placementv1beta1.FailbackPolicy{StabilizationSeconds: ptr.To[int32](30), MaxConcurrent: ptr.To[int32](10)}
			})),
		},
		{
			name: "failback without cluster preferences is refused",
			spec: spec(with(pickN(1), func(p *placementv1beta1.PlacementPolicy) {
				p.Failback = &placementv1beta1.FailbackPolicy{}
			})),
			wantRefusal: "failback needs placementType PickN with clusterPreferences",
		},
		{
			name: "failback on a PickAll placement is refused",
			spec: spec(with(pickAll(), func(p *placementv1beta1.PlacementPolicy) {
				p.Failback = &placementv1beta1.FailbackPolicy{}
			})),
			wantRefusal: "failback needs placementType PickN with clusterPreferences",
		},
		{
			name: "fencing on a single-copy PickN placement is accepted",
			spec: spec(with(pickN(1), func(p *placementv1beta1.PlacementPolicy) {
				p.Fencing = &placementv1beta1.FencingPolicy{LeaseSeconds: ptr.To[int32](30), Action: placementv1beta1.FencingRemove}
			})),
		},
		{
			name: "fencing on a PickN placement of two clusters is refused",
			spec: spec(with(pickN(2), func(p *placementv1beta1.PlacementPolicy) {
				p.Fencing = &placementv1beta1.FencingPolicy{}
			})),
			wantRefusal: "fencing needs placementType PickN with numberOfClusters 1",
		},
		{
			name: "fencing on a PickAll placement is refused",
			spec: spec(with(pickAll(), func(p *placementv1beta1.PlacementPolicy) {
				p.Fencing = &placementv1beta1.FencingPolicy{}
			})),
			wantRefusal: "fencing needs placementType PickN with numberOfClusters 1",
		},
		{
			name: "a fencing action other than ScaleToZero or Remove is refused",
			spec: spec(with(pickN(1), func(p *placementv1beta1.PlacementPolicy) {
				p.Fencing = &placementv1beta1.FencingPolicy{Action: "Pause"}
			})),
			wantRefusal: `spec.policy.fencing.action: Unsupported value: "Pause"`,
		},
		{
			name: "a preferred cluster affinity weight of 101 is refused",
			spec: spec(with(pickN(1), func(p *placementv1beta1.PlacementPolicy) {
				p.Affinity = preferredAffinity(101, labelTerm("env", "dev"))
			})),
			wantRefusal: "spec.policy.affinity.clusterAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight in body should be less than or equal to 100",
		},
		{
			name: "a preferred cluster affinity weight of -101 is refused",
			spec: spec(with(pickN(1), func(p *placementv1beta1.PlacementPolicy) {
				p.Affinity = preferredAffinity(-101, labelTerm("env", "dev"))
			})),
			wantRefusal: "should be greater than or equal to -100",
		},
		{
			name: "a placement affinity weight of zero is refused",
			spec: spec(with(pickN(1), func(p *placementv1beta1.PlacementPolicy) {
				p.Affinity = &placementv1beta1.Affinity{PlacementAffinity: &placementv1beta1.PlacementAffinity{
					PreferredDuringSchedulingIgnoredDuringExecution: []placementv1beta1.WeightedPlacementAffinityTerm{{
						PlacementAffinityTerm: placementv1beta1.PlacementAffinityTerm{TopologyKey: "zone"},
					}},
				}}
			})),
			wantRefusal: "weight in body should be greater than or equal to 1",
		},
		{
			name: "a placement affinity term without a topology key is refused",
			spec: spec(with(pickN(1), func(p *placementv1beta1.PlacementPolicy) {
				p.Affinity = &placementv1beta1.Affinity{PlacementAntiAffinity: &placementv1beta1.PlacementAntiAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: []placementv1beta1.PlacementAffinityTerm{{}},
				}}
			})),
			wantRefusal: "spec.policy.affinity.placementAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey",
		},
		{
			name: "a property sorter in a required term is refused",
			spec: spec(with(pickN(1), func(p *placementv1beta1.PlacementPolicy) {
				p.Affinity = requiredAffinity(placementv1beta1.ClusterSelectorTerm{PropertySorter: &placementv1beta1.PropertySorter{
					Name: clusterv1beta1.PropertyNodeCount, SortOrder: placementv1beta1.Ascending,
				}})
			})),
			wantRefusal: "propertySorter is only allowed in preferredDuringSchedulingIgnoredDuringExecution terms",
		},
		{
			name: "a property selector with two values is refused",
			spec: spec(with(pickAll(), func(p *placementv1beta1.PlacementPolicy) {
				p.Affinity = requiredAffinity(placementv1beta1.ClusterSelectorTerm{PropertySelector: &placementv1beta1.PropertySelector{
					MatchExpressions: []placementv1beta1.PropertySelectorRequirement{{
						Name: clusterv1beta1.PropertyNodeCount, Operator: placementv1beta1.PropertySelectorEqualTo, Values: []string{"3", "4"},
					}},
				}})
			})),
			wantRefusal: "must have at most 1 item",
		},
		{
			name: "an unknown property operator is refused",
			spec: spec(with(pickAll(), func(p *placementv1beta1.PlacementPolicy) {
				p.Affinity = requiredAffinity(placementv1beta1.ClusterSelectorTerm{PropertySelector: &placementv1beta1.PropertySelector{
					MatchExpressions: []placementv1beta1.PropertySelectorRequirement{{
						Name: clusterv1beta1.PropertyNodeCount, Operator: "Gte", Values: []string{"3"},
					}},
				}})
			})),
			wantRefusal: `Unsupported value: "Gte"`,
		},
		{
			name: "a toleration with operator Exists and a value is refused",
			spec: spec(with(pickAll(), func(p *placementv1beta1.PlacementPolicy) {
				p.Tolerations = []placementv1beta1.Toleration{{Key: "maintenance", Operator: placementv1beta1.TolerationOpExists, Value: "true"}}
			})),
			wantRefusal: "a toleration with operator Exists must not have a value",
		},
		{
			name: "a toleration without a key and with operator Equal is refused",
			spec: spec(with(pickAll(), func(p *placementv1beta1.PlacementPolicy) {
				p.Tolerations = []placementv1beta1.Toleration{{Value: "true"}}
			})),
			wantRefusal: "a toleration without a key must use operator Exists",
		},
		{
			name: "a toleration of the PreferNoSchedule effect is refused",
			spec: spec(with(pickAll(), func(p *placementv1beta1.PlacementPolicy) {
				p.Tolerations = []placementv1beta1.Toleration{{Key: "maintenance", Effect: "PreferNoSchedule"}}
			})),
			wantRefusal: `Unsupported value: "PreferNoSchedule"`,
		},
		{
			name: "a resource selector with both a name and a label selector is refused",
			spec: placementv1beta1.PlacementSpec{ResourceSelectors: []placementv1beta1.ResourceSelector{{
				Version: "v1", Kind: "Namespace", Name: "app", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
			}}},
			wantRefusal: "name and labelSelector are mutually exclusive",
		},
		{
			name: "a resource selector with a label selector is accepted",
			spec: placementv1beta1.PlacementSpec{ResourceSelectors: []placementv1beta1.ResourceSelector{{
				Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
			}}},
		},
		{
			name:        "a resource selector without a kind is refused",
			spec:        placementv1beta1.PlacementSpec{ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Name: "app"}}},
			wantRefusal: "spec.resourceSelectors[0].kind",
		},
		{
			name:        "a placement without resource selectors is refused",
			spec:        placementv1beta1.PlacementSpec{ResourceSelectors: []placementv1beta1.ResourceSelector{}},
			wantRefusal: "spec.resourceSelectors: Invalid value: 0: spec.resourceSelectors in body should have at least 1 items",
		},
		{
			name: "a revision history limit of zero is refused",
			spec: func() placementv1beta1.PlacementSpec {
				s := spec(nil)
				s.RevisionHistoryLimit = ptr.To[int32](0)
				return s
			}(),
			wantRefusal: "spec.revisionHistoryLimit in body should be greater than or equal to 1",
		},
		{
			name: "a maxUnavailable of 150% is refused",
			spec: func() placementv1beta1.PlacementSpec {
				s := spec(nil)
				s.Strategy.RollingUpdate = &placementv1beta1.RollingUpdateConfig{MaxUnavailable: ptr.To(intstr.FromString("150%"))}
				return s
			}(),
			wantRefusal: "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: \"150%\": must be a non-negative integer or a percentage from 0% to 100%",
		},
		{
			name: "a negative maxSurge is refused",
			spec: func() placementv1beta1.PlacementSpec {
				s := spec(nil)
				s.Strategy.RollingUpdate = &placementv1beta1.RollingUpdateConfig{MaxSurge: ptr.To(intstr.FromInt32(-1))}
				return s
			}(),
			wantRefusal: "must be a non-negative integer or a percentage from 0% to 100%",
		},
		{
			name: "a rolling update with maxUnavailable and maxSurge both 0 is refused",
			spec: func() placementv1beta1.PlacementSpec {
				s := spec(nil)
				s.Strategy.RollingUpdate = &placementv1beta1.RollingUpdateConfig{MaxUnavailable: ptr.To(intstr.FromInt32(0)), MaxSurge: ptr.To(intstr.FromString("0%"))}
				return s
			}(),
			wantRefusal: "maxUnavailable and maxSurge cannot both be 0: no cluster could ever be updated, added or removed",
		},
		{
			name: "a rolling update with maxUnavailable 0% is refused, since nothing could be updated in place",
			spec: func() placementv1beta1.PlacementSpec {
				s := spec(nil)
				s.Strategy.RollingUpdate = &placementv1beta1.RollingUpdateConfig{MaxUnavailable: ptr.To(intstr.FromString("0%")), MaxSurge: ptr.To(intstr.FromInt32(1))}
				return s
			}(),
			wantRefusal: "maxUnavailable 0 lets no cluster be updated in place",
		},
		{
			name: "a rolling update one cluster at a time without surge is accepted",
			spec: func() placementv1beta1.PlacementSpec {
				s := spec(nil)
				s.Strategy.RollingUpdate = &placementv1beta1.RollingUpdateConfig{MaxUnavailable: ptr.To(intstr.FromInt32(1)), MaxSurge: ptr.To(intstr.FromInt32(0))}
				return s
			}(),
		},
		{
			name: "a server-side apply config with client-side apply is refused",
			spec: func() placementv1beta1.PlacementSpec {
				s := spec(nil)
				s.Strategy.ApplyStrategy = &placementv1beta1.ApplyStrategy{
					Type:                  placementv1beta1.ApplyStrategyTypeClientSideApply,
					ServerSideApplyConfig: &placementv1beta1.ServerSideApplyConfig{Force: ptr.To(true)},
				}
				return s
			}(),
			wantRefusal: "serverSideApplyConfig can only be set when type is ServerSideApply",
		},
		{
			name: "status feedback and availability rules are accepted",
			spec: func() placementv1beta1.PlacementSpec {
				s := spec(nil)
				s.StatusFeedback = []placementv1beta1.StatusFeedbackRule{{Group: "apps", Version: "v1", Kind: "Deployment",
					JSONPaths: []placementv1beta1.JSONPathRule{{Name: "ready", Path: ".status.readyReplicas"}}}}
				s.AvailabilityRules = []placementv1beta1.AvailabilityRule{
					{Group: "example.com", Kind: "Database", Expression: `self.status.phase == "Ready"`},
					{Kind: "ConfigMap", Expression: "true"},
				}
				return s
			}(),
		},
		{
			name: "two availability rules for one kind are refused",
			spec: func() placementv1beta1.PlacementSpec {
				s := spec(nil)
				s.AvailabilityRules = []placementv1beta1.AvailabilityRule{
					{Group: "example.com", Kind: "Database", Expression: "true"},
					{Group: "example.com", Kind: "Database", Expression: "false"},
				}
				return s
			}(),
			wantRefusal: "at most one availability rule per kind",
		},
		{
			name: "a status feedback rule without paths is refused",
			spec: func() placementv1beta1.PlacementSpec {
				s := spec(nil)
				s.StatusFeedback = []placementv1beta1.StatusFeedbackRule{{Group: "apps", Version: "v1", Kind: "Deployment"}}
				return s
			}(),
			wantRefusal: "spec.statusFeedback[0].jsonPaths: Required value",
		},
		{
			name: "a state hand-off rule naming a status feedback value of a PickN placement is accepted",
			spec: func() placementv1beta1.PlacementSpec {
				s := spec(pickN(1))
				s.StatusFeedback = []placementv1beta1.StatusFeedbackRule{{Kind: "ConfigMap",
					JSONPaths: []placementv1beta1.JSONPathRule{{Name: "checkpoint", Path: ".data.checkpoint"}}}}
				s.StateHandOff = []placementv1beta1.StateHandOffRule{{Name: "ckpt", Feedback: placementv1beta1.HandOffFeedback{
					Kind: "ConfigMap", Namespace: "app", Name: "state", JSONPathName: "checkpoint"}}}
				return s
			}(),
		},
		{
			name: "a state hand-off rule on a PickAll placement is refused, since nothing replaces a cluster there",
			spec: func() placementv1beta1.PlacementSpec {
				s := spec(nil)
				s.StatusFeedback = []placementv1beta1.StatusFeedbackRule{{Kind: "ConfigMap",
					JSONPaths: []placementv1beta1.JSONPathRule{{Name: "checkpoint", Path: ".data.checkpoint"}}}}
				s.StateHandOff = []placementv1beta1.StateHandOffRule{{Name: "ckpt", Feedback: placementv1beta1.HandOffFeedback{
					Kind: "ConfigMap", Namespace: "app", Name: "state", JSONPathName: "checkpoint"}}}
				return s
			}(),
			wantRefusal: "which only PickN placements do: set policy.placementType PickN",
		},
		{
			name: "a state hand-off rule naming a path no status feedback rule of its kind has is refused",
			spec: func() placementv1beta1.PlacementSpec {
				s := spec(pickN(1))
				s.StatusFeedback = []placementv1beta1.StatusFeedbackRule{{Group: "apps", Kind: "Deployment",
					JSONPaths: []placementv1beta1.JSONPathRule{{Name: "checkpoint", Path: ".metadata.annotations.checkpoint"}}}}
				s.StateHandOff = []placementv1beta1.StateHandOffRule{{Name: "ckpt", Feedback: placementv1beta1.HandOffFeedback{
					Kind: "ConfigMap", Namespace: "app", Name: "state", JSONPathName: "checkpoint"}}}
				return s
			}(),
			wantRefusal: "every stateHandOff rule must name, in feedback.jsonPathName, a jsonPaths entry of a statusFeedback rule of the same group and kind",
		},
		{
			name: "a state hand-off rule whose name is not a DNS label is refused",
			spec: func() placementv1beta1.PlacementSpec {
				s := spec(pickN(1))
				s.StatusFeedback = []placementv1beta1.StatusFeedbackRule{{Kind: "ConfigMap",
					JSONPaths: []placementv1beta1.JSONPathRule{{Name: "checkpoint", Path: ".data.checkpoint"}}}}
				s.StateHandOff = []placementv1beta1.StateHandOffRule{{Name: "Ckpt_1", Feedback: placementv1beta1.HandOffFeedback{
					Kind: "ConfigMap", Name: "state", JSONPathName: "checkpoint"}}}
				return s
			}(),
			wantRefusal: "spec.stateHandOff[0].name",
		},
		{
			name: "reportBack Mirror on one fixed cluster is accepted",
			spec: func() placementv1beta1.PlacementSpec {
				s := spec(pickFixed("member-1"))
				s.ReportBack = placementv1beta1.ReportBackMirror
				return s
			}(),
		},
		{
			name: "reportBack Mirror on every cluster is refused",
			spec: func() placementv1beta1.PlacementSpec {
				s := spec(nil)
				s.ReportBack = placementv1beta1.ReportBackMirror
				return s
			}(),
			wantRefusal: "reportBack Mirror needs a placement on exactly one cluster",
		},
		{
			name: "an unknown whenToApply is refused",
			spec: func() placementv1beta1.PlacementSpec {
				s := spec(nil)
				s.Strategy.ApplyStrategy = &placementv1beta1.ApplyStrategy{WhenToApply: "Sometimes"}
				return s
			}(),
			wantRefusal: `spec.strategy.applyStrategy.whenToApply: Unsupported value: "Sometimes"`,
		},
		{
			name: "an unknown rollout strategy type is refused",
			spec: func() placementv1beta1.PlacementSpec {
				s := spec(nil)
				s.Strategy.Type = "BlueGreen"
				return s
			}(),
			wantRefusal: `spec.strategy.type: Unsupported value: "BlueGreen"`,
		},
	}
	for _, kind := range placementKinds {
		for _, tc := range tests {
			t.Run(kind.name+"/"+tc.name, func(t *testing.T) {
				want := tc.wantRefusal
				if want == "" {
					want = kind.refusal(tc.spec)
				}
				err := env.Client.Create(context.Background(), kind.new(tc.spec))
				testenv.CheckValidation(t, err, want)
			})
		}
	}
}

// A ResourcePlacement places objects of its own namespace and rolls them out
// itself: what only a ClusterResourcePlacement can do is refused, never ignored.
func TestResourcePlacementValidation(t *testing.T) {
	configMaps := []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "ConfigMap", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	tests := []struct {
		name        string
		spec        placementv1beta1.PlacementSpec
		wantRefusal string
	}{
		{
			name: "selecting ConfigMaps of its namespace by labels is accepted",
			spec: placementv1beta1.PlacementSpec{ResourceSelectors: configMaps, Policy: pickN(2)},
		},
		{
			name:        "selecting a Namespace is refused",
			spec:        placementv1beta1.PlacementSpec{ResourceSelectors: []placementv1beta1.ResourceSelector{namespaceSelector("other")}},
			wantRefusal: "a ResourcePlacement selects objects of its own namespace; it cannot select Namespaces",
		},
		{
			name: "strategy type External is refused",
			spec: placementv1beta1.PlacementSpec{ResourceSelectors: configMaps,
				Strategy: placementv1beta1.RolloutStrategy{Type: placementv1beta1.ExternalRolloutStrategyType}},
			wantRefusal: "strategy type External (staged update runs) is for ClusterResourcePlacements only",
		},
		{
			name: "upsync selectors are refused",
			spec: placementv1beta1.PlacementSpec{ResourceSelectors: configMaps,
				UpsyncSelectors: []placementv1beta1.UpsyncSelector{{Version: "v1", Kind: "ConfigMap"}}},
			wantRefusal: "upsyncSelectors are for ClusterResourcePlacements only",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rp := &placementv1beta1.ResourcePlacement{ObjectMeta: metav1.ObjectMeta{GenerateName: "rp-", Namespace: testNamespace}, Spec: tc.spec}
			testenv.CheckValidation(t, env.Client.Create(context.Background(), rp), tc.wantRefusal)
		})
	}
}

func TestPlacementUpdateValidation(t *testing.T) {
	withTolerations := func(policy *placementv1beta1.PlacementPolicy, tolerations ...placementv1beta1.Toleration) *placementv1beta1.PlacementPolicy {
		policy.Tolerations = tolerations
		return policy
	}
	tests := []struct {
		name        string
		before      placementv1beta1.PlacementSpec
		update      func(*placementv1beta1.PlacementSpec)
		wantRefusal string
	}{
		{
			name:   "changing the number of clusters is accepted",
			before: spec(pickN(2)),
			update: func(s *placementv1beta1.PlacementSpec) { s.Policy.NumberOfClusters = ptr.To[int32](3) },
		},
		{
			name:   "changing the cluster names is accepted",
			before: spec(pickFixed("member-1")),
			update: func(s *placementv1beta1.PlacementSpec) { s.Policy.ClusterNames = []string{"member-2"} },
		},
		{
			name:        "changing the placement type is refused",
			before:      spec(pickN(2)),
			update:      func(s *placementv1beta1.PlacementSpec) { s.Policy = pickAll() },
			wantRefusal: "placementType is immutable; create a new placement to change it",
		},
		{
			name:        "giving a placement without a policy another placement type is refused",
			before:      spec(nil),
			update:      func(s *placementv1beta1.PlacementSpec) { s.Policy = pickN(2) },
			wantRefusal: "placementType is immutable; create a new placement to change it",
		},
		{
			name:   "dropping the policy of a PickAll placement is accepted",
			before: spec(pickAll()),
			update: func(s *placementv1beta1.PlacementSpec) { s.Policy = nil },
		},
		{
			name:   "adding a toleration is accepted",
			before: spec(withTolerations(pickAll(), toleration("a", "1"))),
			update: func(s *placementv1beta1.PlacementSpec) {
				s.Policy.Tolerations = append(s.Policy.Tolerations, toleration("b", "2"))
			},
		},
		{
			name:   "adding the first toleration is accepted",
			before: spec(pickAll()),
			update: func(s *placementv1beta1.PlacementSpec) {
				s.Policy.Tolerations = []placementv1beta1.Toleration{toleration("a", "1")}
			},
		},
		{
			name:        "removing a toleration is refused",
			before:      spec(withTolerations(pickAll(), toleration("a", "1"), toleration("b", "2"))),
			update:      func(s *placementv1beta1.PlacementSpec) { s.Policy.Tolerations = s.Policy.Tolerations[1:] },
			wantRefusal: "existing tolerations cannot be changed or removed, only new ones added",
		},
		{
			name:        "removing every toleration is refused",
			before:      spec(withTolerations(pickN(1), toleration("a", "1"))),
			update:      func(s *placementv1beta1.PlacementSpec) { s.Policy.Tolerations = nil },
			wantRefusal: "existing tolerations cannot be changed or removed, only new ones added",
		},
		{
			name:        "changing a toleration's value is refused",
			before:      spec(withTolerations(pickAll(), toleration("a", "1"))),
			update:      func(s *placementv1beta1.PlacementSpec) { s.Policy.Tolerations[0].Value = "2" },
			wantRefusal: "existing tolerations cannot be changed or removed, only new ones added",
		},
		{
			name:   "a new toleration that breaks a rule is refused",
			before: spec(pickAll()),
			update: func(s *placementv1beta1.PlacementSpec) {
				s.Policy.Tolerations = []placementv1beta1.Toleration{{Value: "1"}}
			},
			wantRefusal: "a toleration without a key must use operator Exists",
		},
	}
	for _, kind := range placementKinds {
		for _, tc := range tests {
			t.Run(kind.name+"/"+tc.name, func(t *testing.T) {
				ctx := context.Background()
				p := kind.new(tc.before)
				if err := env.Client.Create(ctx, p); err != nil {
					t.Fatalf("failed to create the placement: %v", err)
				}
				tc.update(p.GetPlacementSpec())
				err := env.Client.Update(ctx, p)
				testenv.CheckValidation(t, err, tc.wantRefusal)
			})
		}
	}
}

func TestPlacementPrintColumns(t *testing.T) {
	for _, kind := range placementKinds {
		t.Run(kind.name, func(t *testing.T) {
			ctx := context.Background()
			p := kind.new(spec(pickN(2)))
			if err := env.Client.Create(ctx, p); err != nil {
				t.Fatalf("failed to create the placement: %v", err)
			}
			now := metav1.NewTime(time.Now())
			condition := func(perCluster string, status metav1.ConditionStatus, reason string) metav1.Condition {
				return metav1.Condition{
					Type:               p.PlacementConditionType(perCluster),
					Status:             status,
					Reason:             reason,
					ObservedGeneration: p.GetGeneration(),
					LastTransitionTime: now,
				}
			}
			p.GetPlacementStatus().Conditions = []metav1.Condition{
				condition(placementv1beta1.ConditionScheduled, metav1.ConditionTrue, placementv1beta1.ReasonSchedulingPolicyFulfilled),
				condition(placementv1beta1.ConditionWorkSynchronized, metav1.ConditionTrue, placementv1beta1.ReasonWorkSynchronized),
				condition(placementv1beta1.ConditionAvailable, metav1.ConditionFalse, placementv1beta1.ReasonNotAvailableYet),
			}
			p.GetPlacementStatus().PlacementStatuses = []placementv1beta1.PerClusterPlacementStatus{{
				ClusterName: "member-1",
				Conditions: []metav1.Condition{{
					Type: placementv1beta1.ConditionScheduled, Status: metav1.ConditionTrue, Reason: placementv1beta1.ReasonScheduled, LastTransitionTime: now,
				}},
				FailedPlacements: []placementv1beta1.FailedResourcePlacement{{
					ResourceIdentifier: placementv1beta1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Name: "app-config", Namespace: "app"},
					Condition: metav1.Condition{
						Type: placementv1beta1.ConditionAvailable, Status: metav1.ConditionFalse, Reason: placementv1beta1.ReasonNotAvailableYet, LastTransitionTime: now,
					},
				}},
			}}
			if err := env.Client.Status().Update(ctx, p); err != nil {
				t.Fatalf("failed to update the status: %v", err)
			}
			table, err := env.Table(ctx, placementv1beta1.GroupVersion.WithResource(kind.resource), p.GetNamespace(), p.GetName())
			if err != nil {
				t.Fatal(err)
			}
			got, err := testenv.FirstRow(table)
			if err != nil {
				t.Fatal(err)
			}
			want := []testenv.TableColumn{
				{Name: "Name", Value: p.GetName()},
				{Name: "GEN", Value: "1"},
				{Name: "SCHEDULED", Value: "True"},
				{Name: "SCHEDULED-GEN", Value: "1"},
				{Name: "AVAILABLE", Value: "False"},
				{Name: "AVAILABLE-GEN", Value: "1"},
				{Name: "AGE", Value: testenv.AgeValue},
				{Name: "TYPE", Priority: 1, Value: "PickN"},
				{Name: "WORK-SYNCHRONIZED", Priority: 1, Value: "True"},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("print columns (-want +got):\n%s", diff)
			}
		})
	}
}
