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

package workgen

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/envelope"
	"github.com/flotilla-io/flotilla/hub/overrides"
)

// contentError is a failure of what a cluster would receive (an envelope that
// cannot be read, an override that cannot be applied): the Work keeps its
// previous spec, and only a change of the inputs (which wakes the generator)
// can fix it, so it is reported, not retried.
type contentError struct {
	// overriddenReason is the reason of Overridden=False: the overrides could not
	// be applied (to the objects inside an envelope, too).
	overriddenReason string
	// reason is the WorkSynchronized reason.
	reason string
	err    error
}

func (e *contentError) Error() string { return e.err.Error() }
func (e *contentError) Unwrap() error { return e.err }

// rendered is what a binding's cluster receives.
type rendered struct {
	manifests []placementv1beta1.Manifest
	// applied are the override snapshots that changed (or removed) a manifest.
	applied []string
}

// render unwraps envelopes and applies the binding's override snapshots for its
// cluster, manifest by manifest.
func (r *Reconciler) render(ctx context.Context, b placementv1beta1.BindingObj, manifests []placementv1beta1.Manifest) (*rendered, error) {
	raws := make([][]byte, 0, len(manifests))
	for _, m := range manifests {
		raws = append(raws, m.Raw)
	}
	raws, err := envelope.Unwrap(raws)
	if err != nil {
		return nil, &contentError{overriddenReason: placementv1beta1.ReasonEnvelopeInvalid, reason: placementv1beta1.ReasonEnvelopeInvalid, err: err}
	}
	spec := b.GetBindingSpec()
	ovs, err := overrides.Named(ctx, r.Client, spec)
	if err != nil {
		return nil, err
	}
	out := &rendered{}
	var mc *clusterv1beta1.MemberCluster
	if len(ovs) > 0 {
		mc = &clusterv1beta1.MemberCluster{}
		if err := r.Client.Get(ctx, types.NamespacedName{Name: spec.TargetCluster}, mc); err != nil {
			return nil, fmt.Errorf("failed to get member cluster %s: %w", spec.TargetCluster, err)
		}
	}
	seen := map[string]bool{}
	for _, raw := range raws {
		obj := raw
		if len(ovs) > 0 {
			res, err := overrides.Apply(raw, ovs, overrides.Target{Cluster: mc, HandOff: spec.HandOff})
			if err != nil {
				var oe *overrides.Error
				if errors.As(err, &oe) {
					return nil, &contentError{overriddenReason: placementv1beta1.ReasonOverrideFailed, reason: placementv1beta1.ReasonOverrideFailedNotSynchronized, err: err}
				}
				return nil, err
			}
			for _, a := range res.Applied {
				if !seen[a] {
					seen[a] = true
					out.applied = append(out.applied, a)
				}
			}
			if res.Deleted {
				continue
			}
			obj = res.Object
		}
		out.manifests = append(out.manifests, placementv1beta1.Manifest{RawExtension: runtime.RawExtension{Raw: obj}})
	}
	return out, nil
}

// overriddenMessage says which overrides changed what a cluster receives.
func overriddenMessage(applied []string) string {
	return "applied overrides: " + strings.Join(applied, ", ")
}
