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

package clusterprofile

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
)

// FieldManager is the field manager of every write of this package.
const FieldManager = "flotilla-clusterprofile"

// EventClusterProfileNotManaged is the reason of the Warning Event on a
// MemberCluster whose ClusterProfile name is taken by a profile Flotilla did
// not create (it is left as it is).
const EventClusterProfileNotManaged = "ClusterProfileNotManaged"

// Installed reports whether the hub cluster serves ClusterProfiles.
func Installed(mapper meta.RESTMapper) bool {
	_, err := mapper.RESTMapping(schema.GroupKind{Group: cpv1alpha1.GroupVersion.Group, Kind: "ClusterProfile"}, cpv1alpha1.GroupVersion.Version)
	return err == nil
}

// Reconciler keeps the ClusterProfile of every MemberCluster (Desired).
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Namespace holds the profiles.
	Namespace string
	// Access is how consumers reach members (the hub's API proxy).
	Access Access

	warned sync.Map // member name → struct{}: the not-managed Event was sent
}

// Reconcile writes one member's profile when it differs from Desired.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	member := &clusterv1beta1.MemberCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, member); err != nil {
		// A deleted member's profile goes with it (owner reference).
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !member.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	have := &cpv1alpha1.ClusterProfile{}
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: member.Name}, have)
	switch {
	case apierrors.IsNotFound(err):
		have = nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("failed to read the ClusterProfile of member %s: %w", member.Name, err)
	case have.Labels[cpv1alpha1.LabelClusterManagerKey] != ClusterManager:
		if _, sent := r.warned.LoadOrStore(member.Name, struct{}{}); !sent {
			r.Recorder.Eventf(member, nil, "Warning", EventClusterProfileNotManaged, "PublishClusterProfile",
				"ClusterProfile %s/%s exists and is not labelled %s=%s: Flotilla leaves it as it is and publishes no profile for this member",
				r.Namespace, member.Name, cpv1alpha1.LabelClusterManagerKey, ClusterManager)
		}
		return ctrl.Result{}, nil
	}
	r.warned.Delete(member.Name)

	var generation int64
	if have != nil {
		generation = have.Generation
	}
	want := Desired(member, r.Access, generation)
	if have == nil || objectDiffers(have, member, want) {
		applied, err := r.applyObject(ctx, member, want)
		if err != nil {
			return ctrl.Result{}, err
		}
		if applied.Generation != generation {
			want = Desired(member, r.Access, applied.Generation)
		}
		have = applied
	}
	if !apiequality.Semantic.DeepEqual(normalize(have.Status), normalize(want.Status)) {
		if err := r.applyStatus(ctx, member.Name, want.Status); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// objectDiffers reports whether the profile's labels, spec or owner differ
// from what Flotilla writes.
func objectDiffers(have *cpv1alpha1.ClusterProfile, member *clusterv1beta1.MemberCluster, want Profile) bool {
	if !apiequality.Semantic.DeepEqual(have.Spec, want.Spec) {
		return true
	}
	if len(have.Labels) != len(want.Labels) {
		return true
	}
	for k, v := range want.Labels {
		if got, ok := have.Labels[k]; !ok || got != v {
			return true
		}
	}
	for _, o := range have.OwnerReferences {
		if o.UID == member.UID {
			return false
		}
	}
	return true
}

// normalize drops what the API server adds to a status on the way (empty
// lists) so that an unchanged status compares equal.
func normalize(st cpv1alpha1.ClusterProfileStatus) cpv1alpha1.ClusterProfileStatus {
	out := *st.DeepCopy()
	if len(out.Properties) == 0 {
		out.Properties = nil
	}
	if len(out.AccessProviders) == 0 {
		out.AccessProviders = nil
	}
	if len(out.Conditions) == 0 {
		out.Conditions = nil
	}
	for i := range out.Conditions {
		out.Conditions[i].LastTransitionTime = metav1.NewTime(out.Conditions[i].LastTransitionTime.Rfc3339Copy().Time)
	}
	for i := range out.Properties {
		out.Properties[i].LastObservedTime = metav1.NewTime(out.Properties[i].LastObservedTime.Rfc3339Copy().Time)
	}
	return out
}

func (r *Reconciler) applyObject(ctx context.Context, member *clusterv1beta1.MemberCluster, want Profile) (*cpv1alpha1.ClusterProfile, error) {
	body := map[string]any{
		"apiVersion": cpv1alpha1.GroupVersion.String(),
		"kind":       "ClusterProfile",
		"metadata": map[string]any{
			"name":      member.Name,
			"namespace": r.Namespace,
			"labels":    want.Labels,
			"ownerReferences": []metav1.OwnerReference{{
				APIVersion: clusterv1beta1.GroupVersion.String(),
				Kind:       "MemberCluster",
				Name:       member.Name,
				UID:        member.UID,
				Controller: ptr.To(true),
			}},
		},
		"spec": want.Spec,
	}
	data, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("failed to encode the ClusterProfile of member %s: %w", member.Name, err)
	}
	out := &cpv1alpha1.ClusterProfile{}
	out.Namespace, out.Name = r.Namespace, member.Name
	if err := r.Client.Patch(ctx, out, client.RawPatch(types.ApplyPatchType, data), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return nil, fmt.Errorf("failed to apply the ClusterProfile of member %s: %w", member.Name, err)
	}
	return out, nil
}

func (r *Reconciler) applyStatus(ctx context.Context, name string, st cpv1alpha1.ClusterProfileStatus) error {
	body := map[string]any{
		"apiVersion": cpv1alpha1.GroupVersion.String(),
		"kind":       "ClusterProfile",
		"metadata":   map[string]any{"name": name, "namespace": r.Namespace},
		"status":     st,
	}
	data, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("failed to encode the ClusterProfile status of member %s: %w", name, err)
	}
	obj := &cpv1alpha1.ClusterProfile{}
	obj.Namespace, obj.Name = r.Namespace, name
	if err := r.Client.Status().Patch(ctx, obj, client.RawPatch(types.ApplyPatchType, data), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("failed to apply the ClusterProfile status of member %s: %w", name, err)
	}
	return nil
}

// SetupWithManager registers the controller: every MemberCluster, and the
// profiles it owns (a profile edited or deleted by hand is put back).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("clusterprofile").
		For(&clusterv1beta1.MemberCluster{}).
		Owns(&cpv1alpha1.ClusterProfile{}).
		Complete(r)
}
