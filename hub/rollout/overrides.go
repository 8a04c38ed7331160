package rollout

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/envelope"
	"github.com/flotilla-io/flotilla/hub/overrides"
	"github.com/flotilla-io/flotilla/hub/pipeline"
)

// overrideRefs are the override snapshots a binding should apply.
type overrideRefs struct {
	cluster    []string
	namespaced []placementv1beta1.NamespacedName
}

// matches reports whether a binding's spec names exactly these snapshots.
func (w overrideRefs) matches(spec *placementv1beta1.ResourceBindingSpec) bool {
	return slices.Equal(w.cluster, spec.ClusterResourceOverrideSnapshots) &&
		slices.Equal(w.namespaced, spec.ResourceOverrideSnapshots)
}

// loadOverrides decides, for each binding, the latest snapshots of the overrides
// that apply to the latest resources on its cluster, so that a new override
// snapshot (or a cluster's labels changing which rules select it) rolls out like
// new resources.
func (r *Reconciler) loadOverrides(ctx context.Context, s *scope) error {
	s.overrides = map[string]overrideRefs{}
	all, err := overrides.Latest(ctx, r.Client)
	if err != nil || len(all) == 0 {
		return err
	}
	set, err := pipeline.ResourceSnapshotSetOf(ctx, r.Client, s.latest)
	if err != nil {
		return err
	}
	objects, err := snapshotObjects(set)
	if err != nil {
		return err
	}
	for i := range s.bindings {
		b := &s.bindings[i]
		mc := &clusterv1beta1.MemberCluster{}
		if err := r.Client.Get(ctx, types.NamespacedName{Name: b.Spec.TargetCluster}, mc); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("failed to get member cluster %s: %w", b.Spec.TargetCluster, err)
		}
		apply, err := overrides.Applicable(all, s.placement.Name, objects, mc)
		if err != nil {
			return fmt.Errorf("cluster %s: %w", b.Spec.TargetCluster, err)
		}
		var w overrideRefs
		w.cluster, w.namespaced = overrides.Refs(apply)
		s.overrides[b.Name] = w
	}
	return nil
}

// snapshotObjects are the objects of a resource snapshot set as members receive
// them: envelopes replaced by their contents (an envelope that cannot be read
// counts as itself; the work generator reports it).
func snapshotObjects(set *pipeline.ResourceSnapshotSet) ([]*unstructured.Unstructured, error) {
	raws := make([][]byte, 0)
	for _, c := range set.Resources() {
		raws = append(raws, c.Raw)
	}
	if unwrapped, err := envelope.Unwrap(raws); err == nil {
		raws = unwrapped
	}
	out := make([]*unstructured.Unstructured, 0, len(raws))
	for _, raw := range raws {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("failed to read a resource of snapshot %s: %w", set.Master.Name, err)
		}
		out = append(out, obj)
	}
	return out, nil
}
