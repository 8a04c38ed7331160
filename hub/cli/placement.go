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

package cli

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
)

// placementRef names a ClusterResourcePlacement (Namespace empty) or a
// ResourcePlacement.
type placementRef struct {
	Namespace, Name string
}

func (cfg *Config) placementRef(name string) placementRef {
	ns, _ := cfg.Namespace()
	return placementRef{Namespace: ns, Name: name}
}

// Kind is the placement's kind.
func (r placementRef) Kind() string {
	if r.Namespace == "" {
		return "ClusterResourcePlacement"
	}
	return "ResourcePlacement"
}

func (r placementRef) String() string {
	if r.Namespace == "" {
		return "ClusterResourcePlacement " + r.Name
	}
	return "ResourcePlacement " + r.Namespace + "/" + r.Name
}

// conditionType returns the placement-level type of a per-cluster condition.
func (r placementRef) conditionType(perCluster string) string {
	if r.Namespace == "" {
		return placementv1beta1.ClusterResourcePlacementConditionType(perCluster)
	}
	return placementv1beta1.ResourcePlacementConditionType(perCluster)
}

// loadedPlacement is a placement as the commands read it: typed, plus the raw
// object for fields this binary's API types may not have yet.
type loadedPlacement struct {
	ref  placementRef
	obj  placementv1beta1.PlacementObj
	raw  map[string]any
	spec *placementv1beta1.PlacementSpec
	stat *placementv1beta1.PlacementStatus
}

// getPlacement reads the placement. A missing one is an error that names it.
func getPlacement(ctx context.Context, c client.Client, ref placementRef) (*loadedPlacement, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(placementv1beta1.GroupVersion.String())
	u.SetKind(ref.Kind())
	if err := c.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			if ref.Namespace == "" {
				return nil, saying{fmt.Sprintf("%s not found (a ResourcePlacement? add -n <namespace>)", ref), err}
			}
			return nil, saying{fmt.Sprintf("%s not found", ref), err}
		}
		return nil, fmt.Errorf("failed to get %s: %w", ref, err)
	}
	return placementFromRaw(ref, u.Object)
}

// saying is an error that says msg instead of err, and still is err (for
// errors.As and apierrors.IsNotFound).
type saying struct {
	msg string
	err error
}

func (e saying) Error() string { return e.msg }
func (e saying) Unwrap() error { return e.err }

// placementFromRaw reads a placement from its raw object.
func placementFromRaw(ref placementRef, raw map[string]any) (*loadedPlacement, error) {
	var obj placementv1beta1.PlacementObj
	if ref.Namespace == "" {
		obj = &placementv1beta1.ClusterResourcePlacement{}
	} else {
		obj = &placementv1beta1.ResourcePlacement{}
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, obj); err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", ref, err)
	}
	return &loadedPlacement{ref: ref, obj: obj, raw: raw, spec: obj.GetPlacementSpec(), stat: obj.GetPlacementStatus()}, nil
}

// latestPolicySnapshot returns the placement's latest scheduling policy
// snapshot, or nil if it has none yet.
func latestPolicySnapshot(ctx context.Context, c client.Client, ref placementRef) (placementv1beta1.PolicySnapshotObj, error) {
	labels := client.MatchingLabels{placementv1beta1.LabelPlacementName: ref.Name, placementv1beta1.LabelIsLatestSnapshot: "true"}
	var items []placementv1beta1.PolicySnapshotObj
	if ref.Namespace == "" {
		list := &placementv1beta1.ClusterSchedulingPolicySnapshotList{}
		if err := c.List(ctx, list, labels); err != nil {
			return nil, fmt.Errorf("failed to list the policy snapshots of %s: %w", ref, err)
		}
		for i := range list.Items {
			items = append(items, &list.Items[i])
		}
	} else {
		list := &placementv1beta1.SchedulingPolicySnapshotList{}
		if err := c.List(ctx, list, labels, client.InNamespace(ref.Namespace)); err != nil {
			return nil, fmt.Errorf("failed to list the policy snapshots of %s: %w", ref, err)
		}
		for i := range list.Items {
			items = append(items, &list.Items[i])
		}
	}
	if len(items) == 0 {
		return nil, nil
	}
	sort.Slice(items, func(i, j int) bool {
		return items[i].GetCreationTimestamp().After(items[j].GetCreationTimestamp().Time)
	})
	return items[0], nil
}

// binding is the part of a binding the commands show.
type binding struct {
	Name, Placement, Cluster string
	State                    placementv1beta1.BindingState
	// Active is whether the placement is on the cluster through the binding
	// (pipeline.IsActive).
	Active bool
}

// listBindings lists bindings: all of them (namespace "*"), those of
// ClusterResourcePlacements (""), or those of a namespace's ResourcePlacements.
func listBindings(ctx context.Context, c client.Client, namespace string, opts ...client.ListOption) ([]binding, error) {
	var out []binding
	add := func(b placementv1beta1.BindingObj) {
		p := b.GetLabels()[placementv1beta1.LabelPlacementName]
		if ns := b.GetNamespace(); ns != "" {
			p = ns + "/" + p
		}
		spec := b.GetBindingSpec()
		out = append(out, binding{Name: b.GetName(), Placement: p, Cluster: spec.TargetCluster, State: spec.State, Active: pipeline.IsActive(b)})
	}
	if namespace == "" || namespace == "*" {
		list := &placementv1beta1.ClusterResourceBindingList{}
		if err := c.List(ctx, list, opts...); err != nil {
			return nil, fmt.Errorf("failed to list bindings: %w", err)
		}
		for i := range list.Items {
			add(&list.Items[i])
		}
	}
	if namespace != "" {
		lopts := opts
		if namespace != "*" {
			lopts = append(lopts, client.InNamespace(namespace))
		}
		list := &placementv1beta1.ResourceBindingList{}
		if err := c.List(ctx, list, lopts...); err != nil {
			return nil, fmt.Errorf("failed to list bindings: %w", err)
		}
		for i := range list.Items {
			add(&list.Items[i])
		}
	}
	return out, nil
}
