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

// Package reportback copies, for placements with reportBack Mirror, the status of
// each placed object on its (single) member cluster onto the same object on the hub.
package reportback

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// FieldManager is the field manager of mirrored status.
const FieldManager = "flotilla-reportback"

// Reconciler mirrors the status the agent reported in a Work onto the hub objects.
type Reconciler struct {
	Client  client.Client
	Dynamic dynamic.Interface
	Mapper  meta.RESTMapper
}

// Reconcile handles one Work.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	work := &placementv1beta1.Work{}
	if err := r.Client.Get(ctx, req.NamespacedName, work); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if work.Spec.ReportBack != placementv1beta1.ReportBackMirror || !work.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	lg := log.FromContext(ctx)
	for _, mc := range work.Status.ManifestConditions {
		if mc.ReportedStatus == nil || len(mc.ReportedStatus.Raw) == 0 {
			continue
		}
		if err := r.mirror(ctx, mc.Identifier, mc.ReportedStatus.Raw); err != nil {
			return ctrl.Result{}, err
		}
	}
	lg.V(1).Info("Mirrored the member's status onto the hub", "work", req.String())
	return ctrl.Result{}, nil
}

// mirror writes a reported status onto the hub object, unless it holds it already.
// Kinds without a status subresource, and objects gone from the hub, are skipped.
func (r *Reconciler) mirror(ctx context.Context, id placementv1beta1.WorkResourceIdentifier, raw []byte) error {
	gvk := schema.GroupVersionKind{Group: id.Group, Version: id.Version, Kind: id.Kind}
	mapping, err := r.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return nil // the hub does not serve the kind (any more)
	}
	if err != nil {
		return fmt.Errorf("failed to map %s on the hub: %w", gvk, err)
	}
	ri := r.Dynamic.Resource(mapping.Resource).Namespace(id.Namespace)
	if mapping.Scope.Name() == meta.RESTScopeNameRoot {
		ri = r.Dynamic.Resource(mapping.Resource)
	}
	obj, err := ri.Get(ctx, id.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to get %s %s on the hub: %w", id.Kind, id.Name, err)
	}
	var status map[string]any
	if err := json.Unmarshal(raw, &status); err != nil {
		// Retrying cannot mend a report; the agent's next one replaces it.
		log.FromContext(ctx).Error(err, "skipped a reported status that is not a JSON object", "kind", id.Kind, "name", id.Name)
		return nil //nolint:nilerr // logged above; a retry would read the same bytes
	}
	if equality.Semantic.DeepEqual(obj.Object["status"], status) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return fmt.Errorf("failed to encode the status of %s %s: %w", id.Kind, id.Name, err)
	}
	_, err = ri.Patch(ctx, id.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager}, "status")
	if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
		return nil // no status subresource
	}
	if err != nil {
		return fmt.Errorf("failed to mirror the status of %s %s onto the hub: %w", id.Kind, id.Name, err)
	}
	return nil
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("reportback").
		For(&placementv1beta1.Work{}).
		Complete(r)
}
