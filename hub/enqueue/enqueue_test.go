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
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func TestPlacementOf(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   []reconcile.Request
	}{
		{"a labelled object maps to its placement", map[string]string{placementv1beta1.LabelPlacementName: "web"},
			[]reconcile.Request{{NamespacedName: types.NamespacedName{Name: "web"}}}},
		{"an unlabelled object maps to nothing", nil, nil},
		{"a ResourcePlacement's object maps to that ResourcePlacement, not to the ClusterResourcePlacement of its name",
			map[string]string{placementv1beta1.LabelPlacementName: "web", placementv1beta1.LabelPlacementNamespace: "team"},
			[]reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "team", Name: "web"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &placementv1beta1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Labels: tc.labels}}
			if diff := cmp.Diff(tc.want, PlacementOf(context.Background(), b)); diff != "" {
				t.Errorf("PlacementOf (-want +got):\n%s", diff)
			}
		})
	}
}
