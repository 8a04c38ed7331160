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

package upsync

import (
	"context"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
)

// CleanupFinalizer keeps a Work with upsync selectors until the hub has removed the
// mirrors its member made for it.
const CleanupFinalizer = "placement.flotilla.io/upsync-cleanup"

// Reconciler removes the mirrors of a Work when the Work goes: its placement left
// the cluster or the cluster left the fleet. (Mirrors of kinds a placement stops
// selecting stay on the hub until they are deleted there.)
type Reconciler struct {
	Client  client.Client
	Handler *Handler
}

// Reconcile handles one Work.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster, ok := strings.CutPrefix(req.Namespace, clusterv1beta1.MemberNamespacePrefix)
	if !ok {
		return ctrl.Result{}, nil
	}
	work := &placementv1beta1.Work{}
	if err := r.Client.Get(ctx, req.NamespacedName, work); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// Finalizers are patched with the Work's resourceVersion (pipeline.AddFinalizer):
	// the agent's status and the work generator write the same Works all the time.
	if work.DeletionTimestamp.IsZero() && len(work.Spec.UpsyncSelectors) > 0 {
		return ctrl.Result{}, pipeline.AddFinalizer(ctx, r.Client, work, CleanupFinalizer, FieldManager)
	}
	if !controllerutil.ContainsFinalizer(work, CleanupFinalizer) {
		return ctrl.Result{}, nil
	}
	// Deleted (or no longer upsyncing): remove every mirror of the Work from this
	// cluster, of the kinds it selects.
	mirrors, err := r.Handler.mirrors(ctx, cluster, work.Name, work.Spec.UpsyncSelectors)
	if err != nil {
		return ctrl.Result{}, err
	}
	for _, m := range mirrors {
		if err := deleteMirror(ctx, m.ri, m.obj.GetName(), cluster, work.Name); err != nil {
			return ctrl.Result{}, err
		}
	}
	log.FromContext(ctx).Info("Removed the upsynced mirrors of a Work", "cluster", cluster, "work", work.Name, "mirrors", len(mirrors))
	r.Handler.Forget(req.NamespacedName)
	return ctrl.Result{}, pipeline.RemoveFinalizer(ctx, r.Client, work, CleanupFinalizer, FieldManager)
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("upsync").
		For(&placementv1beta1.Work{}).
		Complete(r)
}
