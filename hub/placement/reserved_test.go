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

package placement

import (
	"testing"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
)

func TestASelectorNamingAReservedNamespaceIsRefused(t *testing.T) {
	ns := func(name string) placementv1beta1.ResourceSelector {
		return placementv1beta1.ResourceSelector{Version: "v1", Kind: "Namespace", Name: name}
	}
	crp := pipeline.PlacementKey{Name: "p"}
	for _, tc := range []struct {
		name      string
		key       pipeline.PlacementKey
		selectors []placementv1beta1.ResourceSelector
		want      string
	}{
		{"kube-system is refused", crp, []placementv1beta1.ResourceSelector{ns("team-a"), ns("kube-system")},
			"resourceSelectors[1] names namespace kube-system, which is reserved and never placed (kube-* namespaces belong to each cluster's own Kubernetes system); remove it from the selectors"},
		{"any kube-* namespace is refused", crp, []placementv1beta1.ResourceSelector{ns("kube-node-lease")},
			"resourceSelectors[0] names namespace kube-node-lease, which is reserved and never placed (kube-* namespaces belong to each cluster's own Kubernetes system); remove it from the selectors"},
		{"flotilla-system is refused", crp, []placementv1beta1.ResourceSelector{ns("flotilla-system")},
			"resourceSelectors[0] names namespace flotilla-system, which is reserved and never placed (it is Flotilla's own namespace on every cluster); remove it from the selectors"},
		{"a member's Work namespace is refused", crp, []placementv1beta1.ResourceSelector{ns("flotilla-member-east")},
			"resourceSelectors[0] names namespace flotilla-member-east, which is reserved and never placed (flotilla-member-* namespaces hold the hub's Work for each member cluster); remove it from the selectors"},
		{"a ResourcePlacement in a reserved namespace is refused", pipeline.PlacementKey{Namespace: "kube-public", Name: "p"},
			[]placementv1beta1.ResourceSelector{{Version: "v1", Kind: "ConfigMap"}},
			"a ResourcePlacement in namespace kube-public places nothing: the namespace is reserved (kube-* namespaces belong to each cluster's own Kubernetes system)"},
		{"an ordinary namespace is fine", crp, []placementv1beta1.ResourceSelector{ns("team-a"), ns("kubernetes-dashboard")}, ""},
		{"a Namespace selector by labels is not refused (what it matches is left out)", crp,
			[]placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace"}}, ""},
		{"a kind of another group named Namespace is not a Namespace", crp,
			[]placementv1beta1.ResourceSelector{{Group: "example.com", Version: "v1", Kind: "Namespace", Name: "kube-system"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if err := reservedSelectors(tc.key, tc.selectors); err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("reservedSelectors =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestReservedNamespacesLeftOutAreNamedInTheScheduledMessage(t *testing.T) {
	if got := reservedNote(nil); got != "" {
		t.Errorf("reservedNote(nil) = %q, want empty", got)
	}
	want := "; reserved namespace(s) kube-public, kube-system match a Namespace selector and are left out (never placed)"
	if got := reservedNote([]string{"kube-public", "kube-system"}); got != want {
		t.Errorf("reservedNote = %q, want %q", got, want)
	}
}
