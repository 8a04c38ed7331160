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
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

func TestAPlacementNamingAReservedNamespaceIsRefused(t *testing.T) {
	const refusal = "the namespace is reserved (kube-*, flotilla-system, flotilla-member-*) and is never placed"
	for _, tc := range []struct {
		name        string
		selector    placementv1beta1.ResourceSelector
		wantRefusal string
	}{
		{"kube-system is refused", namespaceSelector("kube-system"), refusal},
		{"kube-node-lease is refused", namespaceSelector("kube-node-lease"), refusal},
		{"flotilla-system is refused", namespaceSelector("flotilla-system"), refusal},
		{"a member's Work namespace is refused", namespaceSelector("flotilla-member-east"), refusal},
		{"an ordinary namespace is accepted", namespaceSelector("kubernetes-dashboard"), ""},
		{"Namespaces by labels are accepted (reserved ones are left out at selection)",
			placementv1beta1.ResourceSelector{Version: "v1", Kind: "Namespace", LabelSelector: &metav1.LabelSelector{}}, ""},
		{"a kind named Namespace of another group is accepted",
			placementv1beta1.ResourceSelector{Group: "example.com", Version: "v1", Kind: "Namespace", Name: "kube-system"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			crp := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{GenerateName: "crp-"},
				Spec: placementv1beta1.PlacementSpec{ResourceSelectors: []placementv1beta1.ResourceSelector{tc.selector}}}
			err := env.Client.Create(context.Background(), crp)
			testenv.CheckValidation(t, err, tc.wantRefusal)
			if err == nil {
				_ = env.Client.Delete(context.Background(), crp)
			}
		})
	}
}
