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

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Latest returns the latest snapshot of every override, of both kinds.
func Latest(ctx context.Context, r client.Reader) ([]Override, error) {
	latest := client.MatchingLabels{placementv1beta1.LabelIsLatestSnapshot: "true"}
	cros := &placementv1beta1.ClusterResourceOverrideSnapshotList{}
	if err := r.List(ctx, cros, latest); err != nil {
		return nil, fmt.Errorf("failed to list ClusterResourceOverride snapshots: %w", err)
	}
	ros := &placementv1beta1.ResourceOverrideSnapshotList{}
	if err := r.List(ctx, ros, latest); err != nil {
		return nil, fmt.Errorf("failed to list ResourceOverride snapshots: %w", err)
	}
	out := make([]Override, 0, len(cros.Items)+len(ros.Items))
	for i := range cros.Items {
		out = append(out, FromClusterSnapshot(&cros.Items[i]))
	}
	for i := range ros.Items {
		out = append(out, FromSnapshot(&ros.Items[i]))
	}
	Sort(out)
	return out, nil
}

// Named returns the override snapshots a binding names, in the order they apply.
// A snapshot that is gone is an error naming it.
func Named(ctx context.Context, r client.Reader, spec *placementv1beta1.ResourceBindingSpec) ([]Override, error) {
	out := make([]Override, 0, len(spec.ClusterResourceOverrideSnapshots)+len(spec.ResourceOverrideSnapshots))
	for _, n := range spec.ClusterResourceOverrideSnapshots {
		s := &placementv1beta1.ClusterResourceOverrideSnapshot{}
		if err := r.Get(ctx, types.NamespacedName{Name: n}, s); err != nil {
			return nil, fmt.Errorf("failed to get ClusterResourceOverrideSnapshot %s: %w", n, err)
		}
		out = append(out, FromClusterSnapshot(s))
	}
	for _, n := range spec.ResourceOverrideSnapshots {
		s := &placementv1beta1.ResourceOverrideSnapshot{}
		if err := r.Get(ctx, types.NamespacedName{Namespace: n.Namespace, Name: n.Name}, s); err != nil {
			return nil, fmt.Errorf("failed to get ResourceOverrideSnapshot %s/%s: %w", n.Namespace, n.Name, err)
		}
		out = append(out, FromSnapshot(s))
	}
	Sort(out)
	return out, nil
}

// Refs returns how a binding's spec names overrides: the ClusterResourceOverride
// snapshots' names and the ResourceOverride snapshots' namespaces and names, nil
// when there are none.
func Refs(os []Override) (cluster []string, namespaced []placementv1beta1.NamespacedName) {
	for _, o := range os {
		if o.clusterScoped() {
			cluster = append(cluster, o.Name)
		} else {
			namespaced = append(namespaced, placementv1beta1.NamespacedName{Namespace: o.Namespace, Name: o.Name})
		}
	}
	return cluster, namespaced
}
