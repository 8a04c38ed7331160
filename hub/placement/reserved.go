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
	"context"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/log"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/resources"
)

// Reserved namespaces (resources.ReservedNamespace: kube-*, flotilla-system,
// flotilla-member-*) are never placed, and a placement never keeps that
// silent:
//
//   - a selector that names one (a Namespace by name), or a ResourcePlacement
//     in one, makes the placement Scheduled=False, InvalidResourceSelectors,
//     and nothing is placed until it changes (the API server refuses the first
//     at admission already, by a validation rule on ResourceSelector; this
//     covers placements created before the rule);
//   - a Namespace selector by labels that matches one leaves it out and places
//     the rest; the Scheduled condition's message names what was left out.

// reservedSelectors returns an error naming the reserved namespace a
// placement names, and why it is reserved; nil if it names none.
func reservedSelectors(key pipeline.PlacementKey, selectors []placementv1beta1.ResourceSelector) error {
	if why := resources.ReservedNamespace(key.Namespace); key.Namespaced() && why != "" {
		return fmt.Errorf("a ResourcePlacement in namespace %s places nothing: the namespace is reserved (%s)", key.Namespace, why)
	}
	for i, sel := range selectors {
		if sel.Group != "" || sel.Kind != "Namespace" || sel.Name == "" {
			continue
		}
		if why := resources.ReservedNamespace(sel.Name); why != "" {
			return fmt.Errorf("resourceSelectors[%d] names namespace %s, which is reserved and never placed (%s); remove it from the selectors", i, sel.Name, why)
		}
	}
	return nil
}

// reservedNote is the sentence the Scheduled condition's message ends with
// when Namespace selectors by labels matched reserved namespaces, or "".
func reservedNote(leftOut []string) string {
	if len(leftOut) == 0 {
		return ""
	}
	return fmt.Sprintf("; reserved namespace(s) %s match a Namespace selector and are left out (never placed)", strings.Join(leftOut, ", "))
}

// reservedMatcher is implemented by a Selector that can say which reserved
// namespaces label selectors match (resources.Watcher).
type reservedMatcher interface {
	ReservedMatches(ctx context.Context, selectors []placementv1beta1.ResourceSelector) ([]string, error)
}

// findReservedLeftOut records, for a ClusterResourcePlacement, the reserved
// namespaces its Namespace selectors by labels match (left out of selection).
func (r *Reconciler) findReservedLeftOut(ctx context.Context, s *scope) {
	m, ok := r.Resources.(reservedMatcher)
	if !ok || s.key.Namespaced() || s.selectErr != nil {
		return
	}
	names, err := m.ReservedMatches(ctx, s.placement.GetPlacementSpec().ResourceSelectors)
	if err != nil {
		log.FromContext(ctx).V(1).Info("cannot tell which reserved namespaces the selectors match", "error", err.Error())
		return
	}
	s.reservedLeftOut = names
}
