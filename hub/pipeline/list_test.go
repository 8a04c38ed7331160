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

package pipeline

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// The listers return the objects of the key's scope only, as pointers of the
// interface types, and the two-scope listers return both kinds.
func TestListersReturnTheKeysScope(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := placementv1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	crp, rp := PlacementKey{Name: "web"}, PlacementKey{Namespace: "team-a", Name: "web"}
	meta := func(k PlacementKey, name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: k.Namespace, Name: name, Labels: k.Labels()}
	}
	spec := func(cluster string) placementv1beta1.ResourceBindingSpec {
		return placementv1beta1.ResourceBindingSpec{TargetCluster: cluster}
	}
	objs := []client.Object{
		&placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "web"}},
		&placementv1beta1.ResourcePlacement{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web"}},
		&placementv1beta1.ClusterResourceBinding{ObjectMeta: meta(crp, "web-m1"), Spec: spec("m1")},
		&placementv1beta1.ResourceBinding{ObjectMeta: meta(rp, "web-m1"), Spec: spec("m1")},
		&placementv1beta1.ResourceBinding{ObjectMeta: meta(rp, "web-m2"), Spec: spec("m2")},
		&placementv1beta1.ClusterResourceSnapshot{ObjectMeta: meta(crp, "web-0-snapshot")},
		&placementv1beta1.ResourceSnapshot{ObjectMeta: meta(rp, "web-0-snapshot")},
		&placementv1beta1.SchedulingPolicySnapshot{ObjectMeta: meta(rp, "web-0")},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithIndex(&placementv1beta1.ClusterResourceBinding{}, IndexBindingCluster, func(o client.Object) []string {
			return []string{o.(placementv1beta1.BindingObj).GetBindingSpec().TargetCluster}
		}).
		WithIndex(&placementv1beta1.ResourceBinding{}, IndexBindingCluster, func(o client.Object) []string {
			return []string{o.(placementv1beta1.BindingObj).GetBindingSpec().TargetCluster}
		}).Build()
	ctx := context.Background()
	names := func(os []metav1.Object) []string {
		var out []string
		for _, o := range os {
			out = append(out, o.GetNamespace()+"/"+o.GetName())
		}
		return out
	}
	check := func(what string, got []metav1.Object, want ...string) {
		t.Helper()
		if g := names(got); !slices.Equal(g, want) {
			t.Errorf("%s = %v, want %v", what, g, want)
		}
	}
	asMeta := func(n int, at func(int) metav1.Object) []metav1.Object {
		out := make([]metav1.Object, n)
		for i := range out {
			out[i] = at(i)
		}
		return out
	}

	ps, err := ListPlacements(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	check("ListPlacements", asMeta(len(ps), func(i int) metav1.Object { return ps[i] }), "/web", "team-a/web")
	for _, k := range []PlacementKey{crp, rp} {
		bs, err := ListBindings(ctx, c, k)
		if err != nil {
			t.Fatal(err)
		}
		if k.Namespaced() {
			check("ListBindings(rp)", asMeta(len(bs), func(i int) metav1.Object { return bs[i] }), "team-a/web-m1", "team-a/web-m2")
		} else {
			check("ListBindings(crp)", asMeta(len(bs), func(i int) metav1.Object { return bs[i] }), "/web-m1")
		}
	}
	on, err := ListBindingsOnCluster(ctx, c, "m1")
	if err != nil {
		t.Fatal(err)
	}
	check("ListBindingsOnCluster(m1)", asMeta(len(on), func(i int) metav1.Object { return on[i] }), "/web-m1", "team-a/web-m1")
	rs, err := ListResourceSnapshots(ctx, c, rp, nil)
	if err != nil {
		t.Fatal(err)
	}
	check("ListResourceSnapshots(rp)", asMeta(len(rs), func(i int) metav1.Object { return rs[i] }), "team-a/web-0-snapshot")
	pols, err := ListPolicySnapshots(ctx, c, crp, nil)
	if err != nil {
		t.Fatal(err)
	}
	check("ListPolicySnapshots(crp)", asMeta(len(pols), func(i int) metav1.Object { return pols[i] }))
}
