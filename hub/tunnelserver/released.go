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

package tunnelserver

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/eventnote"
)

// reportReleased tells the hub's users what a member kept instead of deleting it
// when it removed a deleted Work: an ObjectsReleased Event on the Work and on its
// placement (which may be gone already: the Event then names it without a UID).
// The Work's status cannot say it: the Work is let go of right after.
func (s *Server) reportReleased(ctx context.Context, member, ns, workName string, released []string) {
	if len(released) == 0 || s.recorder == nil {
		return
	}
	w := &placementv1beta1.Work{}
	if err := s.direct.Get(ctx, types.NamespacedName{Namespace: ns, Name: workName}, w); err != nil {
		return
	}
	note := eventnote.Bound("member " + member + " kept " + strings.Join(released, "; "))
	s.recorder.Eventf(w, nil, corev1.EventTypeNormal, placementv1beta1.EventReasonObjectsReleased, "Release", "%s", note)
	if p := s.placementOf(ctx, w); p != nil {
		s.recorder.Eventf(p, nil, corev1.EventTypeNormal, placementv1beta1.EventReasonObjectsReleased, "Release", "%s", note)
	}
}

// placementOf returns the placement a Work belongs to, from its labels; a stand-in
// with its name if the placement is gone; nil if the Work names none.
func (s *Server) placementOf(ctx context.Context, w *placementv1beta1.Work) runtime.Object {
	name := w.Labels[placementv1beta1.LabelPlacementName]
	if name == "" {
		return nil
	}
	var p client.Object = &placementv1beta1.ClusterResourcePlacement{}
	if pns := w.Labels[placementv1beta1.LabelPlacementNamespace]; pns != "" {
		p = &placementv1beta1.ResourcePlacement{}
		p.SetNamespace(pns)
	}
	p.SetName(name)
	// Gone, or unreadable: the stand-in still names it.
	_ = s.direct.Get(ctx, client.ObjectKeyFromObject(p), p)
	return p
}
