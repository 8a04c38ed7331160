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

package eviction

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func minAvailable(v intstr.IntOrString) placementv1beta1.PlacementDisruptionBudgetSpec {
	return placementv1beta1.PlacementDisruptionBudgetSpec{MinAvailable: &v}
}

func maxUnavailable(v intstr.IntOrString) placementv1beta1.PlacementDisruptionBudgetSpec {
	return placementv1beta1.PlacementDisruptionBudgetSpec{MaxUnavailable: &v}
}

// standing says that available of target clusters are available, the evictee
// among them.
func standing(available, target int) Standing {
	return Standing{Target: target, Available: available, EvicteeAvailable: true}
}

func TestCheckBudget(t *testing.T) {
	tests := []struct {
		name     string
		budget   placementv1beta1.PlacementDisruptionBudgetSpec
		standing Standing
		want     Decision
		wantErr  string
	}{
		{
			name:     "minAvailable is kept when enough clusters stay available",
			budget:   minAvailable(intstr.FromInt32(2)),
			standing: standing(3, 3),
			want:     Decision{Allowed: true, Message: "evicting member-2 leaves 2 of 3 clusters available; the budget requires minAvailable 2"},
		},
		{
			name:     "minAvailable refuses to leave too few clusters available",
			budget:   minAvailable(intstr.FromInt32(2)),
			standing: standing(2, 3),
			want:     Decision{Allowed: false, Message: "evicting member-2 would leave 1 of 3 clusters available; the budget requires minAvailable 2"},
		},
		{
			name:     "minAvailable 1 refuses to evict the only available cluster",
			budget:   minAvailable(intstr.FromInt32(1)),
			standing: standing(1, 1),
			want:     Decision{Allowed: false, Message: "evicting member-2 would leave 0 of 1 cluster available; the budget requires minAvailable 1"},
		},
		{
			name:     "evicting an unavailable cluster does not lower availability",
			budget:   minAvailable(intstr.FromInt32(2)),
			standing: Standing{Target: 3, Available: 2, EvicteeAvailable: false},
			want:     Decision{Allowed: true, Message: "evicting member-2 leaves 2 of 3 clusters available; the budget requires minAvailable 2"},
		},
		{
			name:     "evicting an unavailable cluster is still refused while too few are available",
			budget:   minAvailable(intstr.FromInt32(2)),
			standing: Standing{Target: 3, Available: 1, EvicteeAvailable: false},
			want:     Decision{Allowed: false, Message: "evicting member-2 would leave 1 of 3 clusters available; the budget requires minAvailable 2"},
		},
		{
			name:     "minAvailable 0 allows anything",
			budget:   minAvailable(intstr.FromInt32(0)),
			standing: standing(1, 1),
			want:     Decision{Allowed: true, Message: "evicting member-2 leaves 0 of 1 cluster available; the budget requires minAvailable 0"},
		},
		{
			name:     "a minAvailable percentage rounds up",
			budget:   minAvailable(intstr.FromString("50%")),
			standing: standing(2, 3),
			want: Decision{Allowed: false, Message: "evicting member-2 would leave 1 of 3 clusters available; " +
				"the budget requires minAvailable 2 (50% of 3, rounded up)"},
		},
		{
			name:     "a minAvailable percentage that is exact needs no rounding",
			budget:   minAvailable(intstr.FromString("50%")),
			standing: standing(4, 4),
			want: Decision{Allowed: true, Message: "evicting member-2 leaves 3 of 4 clusters available; " +
				"the budget requires minAvailable 2 (50% of 4, rounded up)"},
		},
		{
			name:     "minAvailable 100% refuses any eviction of an available cluster",
			budget:   minAvailable(intstr.FromString("100%")),
			standing: standing(5, 5),
			want: Decision{Allowed: false, Message: "evicting member-2 would leave 4 of 5 clusters available; " +
				"the budget requires minAvailable 5 (100% of 5, rounded up)"},
		},
		{
			name:     "maxUnavailable is kept when few enough clusters become unavailable",
			budget:   maxUnavailable(intstr.FromInt32(1)),
			standing: standing(3, 3),
			want:     Decision{Allowed: true, Message: "evicting member-2 leaves 1 of 3 clusters unavailable; the budget allows maxUnavailable 1"},
		},
		{
			name:     "maxUnavailable refuses to leave too many clusters unavailable",
			budget:   maxUnavailable(intstr.FromInt32(1)),
			standing: standing(2, 3),
			want:     Decision{Allowed: false, Message: "evicting member-2 would leave 2 of 3 clusters unavailable; the budget allows maxUnavailable 1"},
		},
		{
			name:     "a maxUnavailable percentage rounds down",
			budget:   maxUnavailable(intstr.FromString("25%")),
			standing: standing(3, 3),
			want: Decision{Allowed: false, Message: "evicting member-2 would leave 1 of 3 clusters unavailable; " +
				"the budget allows maxUnavailable 0 (25% of 3, rounded down)"},
		},
		{
			name:     "a maxUnavailable percentage allows what it says",
			budget:   maxUnavailable(intstr.FromString("50%")),
			standing: standing(4, 4),
			want: Decision{Allowed: true, Message: "evicting member-2 leaves 1 of 4 clusters unavailable; " +
				"the budget allows maxUnavailable 2 (50% of 4, rounded down)"},
		},
		{
			name:     "unfilled PickN slots count as unavailable",
			budget:   maxUnavailable(intstr.FromInt32(1)),
			standing: standing(2, 3),
			want:     Decision{Allowed: false, Message: "evicting member-2 would leave 2 of 3 clusters unavailable; the budget allows maxUnavailable 1"},
		},
		{
			name:    "a budget with both fields set cannot be evaluated",
			budget:  placementv1beta1.PlacementDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(1))},
			wantErr: "both minAvailable and maxUnavailable are set; set exactly one",
		},
		{
			name:    "a budget with neither field set cannot be evaluated",
			wantErr: "neither minAvailable nor maxUnavailable is set; set exactly one",
		},
		{
			name:     "a malformed percentage cannot be evaluated",
			budget:   minAvailable(intstr.FromString("half")),
			standing: standing(1, 1),
			wantErr:  `invalid minAvailable: invalid value for IntOrString: invalid type: string is not a percentage`,
		},
		{
			name:     "a negative number cannot be evaluated",
			budget:   maxUnavailable(intstr.FromInt32(-1)),
			standing: standing(1, 1),
			wantErr:  "invalid maxUnavailable: -1 is negative",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CheckBudget(tt.budget, "member-2", tt.standing)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("CheckBudget() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("CheckBudget() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CheckBudget() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTargetCount(t *testing.T) {
	tests := []struct {
		name   string
		policy *placementv1beta1.PlacementPolicy
		active int
		want   int
	}{
		{name: "PickN targets numberOfClusters, however many bindings it has", policy: &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN, NumberOfClusters: ptr.To[int32](3)}, active: 2, want: 3},
		{name: "PickAll targets the clusters it is on", policy: &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAll}, active: 4, want: 4},
		{name: "no policy is PickAll", active: 2, want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := TargetCount(tt.policy, tt.active); got != tt.want {
				t.Errorf("TargetCount() = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestIsAvailable(t *testing.T) {
	binding := func(gen int64, status metav1.ConditionStatus, observed int64) *placementv1beta1.ClusterResourceBinding {
		b := &placementv1beta1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Generation: gen}}
		if status != "" {
			b.Status.Conditions = []metav1.Condition{{Type: placementv1beta1.ConditionAvailable, Status: status, ObservedGeneration: observed}}
		}
		return b
	}
	tests := []struct {
		name    string
		binding *placementv1beta1.ClusterResourceBinding
		want    bool
	}{
		{name: "Available True at the current generation is available", binding: binding(2, metav1.ConditionTrue, 2), want: true},
		{name: "Available True at an older generation is not", binding: binding(3, metav1.ConditionTrue, 2)},
		{name: "Available False is not", binding: binding(2, metav1.ConditionFalse, 2)},
		{name: "Available Unknown is not", binding: binding(2, metav1.ConditionUnknown, 2)},
		{name: "no Available condition is not", binding: binding(2, "", 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsAvailable(tt.binding); got != tt.want {
				t.Errorf("IsAvailable() = %v, want %v", got, tt.want)
			}
		})
	}
}
