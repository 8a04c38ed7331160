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
	p, err := overrides.NewPlanner(ctx, r.Client, s.key, s.latest)
	if err != nil {
		return err
	}
	for _, b := range s.bindings {
		if s.overrides[b.GetName()], err = p.For(ctx, b.GetBindingSpec().TargetCluster); err != nil {
			return err
		}
	}
	return nil
}
