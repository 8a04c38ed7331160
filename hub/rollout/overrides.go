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
