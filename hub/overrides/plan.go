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

package overrides

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/envelope"
	"github.com/flotilla-io/flotilla/hub/pipeline"
)

// BindingRefs are the override snapshots a binding applies, as its spec names
// them (nil lists when there are none).
type BindingRefs struct {
	Cluster    []string
	Namespaced []placementv1beta1.NamespacedName
}

// Matches reports whether a binding's spec names exactly these snapshots.
func (w BindingRefs) Matches(spec *placementv1beta1.ResourceBindingSpec) bool {
	return slices.Equal(w.Cluster, spec.ClusterResourceOverrideSnapshots) &&
		slices.Equal(w.Namespaced, spec.ResourceOverrideSnapshots)
}

// Set adds the binding spec fields to a pipeline.SpecPatch set (absent when
// empty, which removes them).
func (w BindingRefs) Set(set map[string]any) {
	set["clusterResourceOverrideSnapshots"], set["resourceOverrideSnapshots"] = nil, nil
	if len(w.Cluster) > 0 {
		set["clusterResourceOverrideSnapshots"] = w.Cluster
	}
	if len(w.Namespaced) > 0 {
		set["resourceOverrideSnapshots"] = w.Namespaced
	}
}

// Planner decides which override snapshots a placement's bindings apply with one
// resource snapshot: the latest snapshots of the overrides for the placement (or
// any) that select one of its objects (envelopes unwrapped) and have a rule that
// selects the binding's cluster.
type Planner struct {
	reader    client.Reader
	placement pipeline.PlacementKey
	latest    []Override
	objects   []*unstructured.Unstructured
}

// NewPlanner reads the latest override snapshots and, if there are any, the
// objects of the resource snapshot set whose master is given.
func NewPlanner(ctx context.Context, r client.Reader, placement pipeline.PlacementKey, master placementv1beta1.ResourceSnapshotObj) (*Planner, error) {
	p := &Planner{reader: r, placement: placement}
	all, err := Latest(ctx, r)
	if err != nil || len(all) == 0 {
		return p, err
	}
	p.latest = all
	set, err := pipeline.ResourceSnapshotSetOf(ctx, r, master)
	if err != nil {
		return nil, err
	}
	raws := make([][]byte, 0)
	for _, c := range set.Resources() {
		raws = append(raws, c.Raw)
	}
	// An envelope that cannot be read counts as itself; the work generator
	// reports it.
	if unwrapped, err := envelope.Unwrap(raws); err == nil {
		raws = unwrapped
	}
	for _, raw := range raws {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("failed to read a resource of snapshot %s: %w", master.GetName(), err)
		}
		p.objects = append(p.objects, obj)
	}
	return p, nil
}

// For returns the override snapshots a binding on cluster applies (none for a
// cluster that is gone).
func (p *Planner) For(ctx context.Context, cluster string) (BindingRefs, error) {
	if len(p.latest) == 0 {
		return BindingRefs{}, nil
	}
	mc := &clusterv1beta1.MemberCluster{}
	if err := p.reader.Get(ctx, types.NamespacedName{Name: cluster}, mc); err != nil {
		if apierrors.IsNotFound(err) {
			return BindingRefs{}, nil
		}
		return BindingRefs{}, fmt.Errorf("failed to get member cluster %s: %w", cluster, err)
	}
	apply, err := Applicable(p.latest, p.placement, p.objects, mc)
	if err != nil {
		return BindingRefs{}, fmt.Errorf("cluster %s: %w", cluster, err)
	}
	var w BindingRefs
	w.Cluster, w.Namespaced = Refs(apply)
	return w, nil
}
