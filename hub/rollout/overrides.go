package rollout

import (
	"context"

	"github.com/flotilla-io/flotilla/hub/overrides"
)

// loadOverrides decides, for each binding, the latest snapshots of the overrides
// that apply to the latest resources on its cluster, so that a new override
// snapshot (or a cluster's labels changing which rules select it) rolls out like
// new resources.
func (r *Reconciler) loadOverrides(ctx context.Context, s *scope) error {
	s.overrides = map[string]overrides.BindingRefs{}
	p, err := overrides.NewPlanner(ctx, r.Client, s.placement.Name, s.latest)
	if err != nil {
		return err
	}
	for i := range s.bindings {
		b := &s.bindings[i]
		if s.overrides[b.Name], err = p.For(ctx, b.Spec.TargetCluster); err != nil {
			return err
		}
	}
	return nil
}
