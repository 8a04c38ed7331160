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

package overrides

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
)

// ManagerOverrideSnapshot is the field manager of the override snapshot controller.
const ManagerOverrideSnapshot = pipeline.ManagerOverrideSnapshot

// DefaultSnapshotHistory is how many snapshots of an override are kept.
const DefaultSnapshotHistory = 10

// SnapshotReconciler keeps the snapshots of ClusterResourceOverrides (Cluster set)
// or of ResourceOverrides: a new snapshot with the next index for every change of
// an override's spec, the latest labelled is-latest-snapshot=true; at most
// History snapshots per override; all of them deleted with the override.
type SnapshotReconciler struct {
	Client client.Client
	// Cluster selects ClusterResourceOverrides; false selects ResourceOverrides.
	Cluster bool
	// History is how many snapshots of an override are kept. Default:
	// DefaultSnapshotHistory.
	History int
}

// kinds adapts the two override kinds to one reconcile.
type kinds interface {
	override() client.Object
	spec(o client.Object) any
	snapshotList() client.ObjectList
	snapshots(l client.ObjectList) []client.Object
	newSnapshot(o client.Object, name, hash string) (client.Object, error)
	hash(s client.Object) string
	status(o client.Object) *placementv1beta1.OverrideStatus
}

// Reconcile snapshots one override.
func (r *SnapshotReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	k := r.kinds()
	o := k.override()
	if err := r.Client.Get(ctx, req.NamespacedName, o); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	lg := log.FromContext(ctx)
	existing, err := r.list(ctx, k, o)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !o.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, r.reconcileDelete(ctx, o, existing)
	}
	if err := pipeline.AddFinalizer(ctx, r.Client, o, placementv1beta1.OverrideSnapshotCleanupFinalizer, ManagerOverrideSnapshot); err != nil {
		return ctrl.Result{}, err
	}
	raw, err := json.Marshal(k.spec(o))
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to hash the override: %w", err)
	}
	sum := sha256.Sum256(raw)
	hash := hex.EncodeToString(sum[:])
	var latest client.Object
	if n := len(existing); n > 0 {
		latest = existing[n-1]
	}
	if latest == nil || k.hash(latest) != hash {
		next := 0
		if latest != nil {
			next = Index(latest) + 1
		}
		s, err := k.newSnapshot(o, fmt.Sprintf("%s-%d", o.GetName(), next), hash)
		if err != nil {
			return ctrl.Result{}, err
		}
		s.SetLabels(map[string]string{
			placementv1beta1.LabelOverrideName:     o.GetName(),
			placementv1beta1.LabelOverrideIndex:    strconv.Itoa(next),
			placementv1beta1.LabelIsLatestSnapshot: "true",
		})
		if err := r.Client.Create(ctx, s, client.FieldOwner(ManagerOverrideSnapshot)); err != nil {
			return ctrl.Result{}, fmt.Errorf("failed to create override snapshot %s: %w", s.GetName(), err)
		}
		lg.Info("created override snapshot", "snapshot", s.GetName(), "index", next)
		existing = append(existing, s)
	}
	// Only the last is the latest.
	for _, s := range existing[:len(existing)-1] {
		if s.GetLabels()[placementv1beta1.LabelIsLatestSnapshot] == "false" {
			continue
		}
		patch := client.MergeFrom(s.DeepCopyObject().(client.Object))
		l := s.GetLabels()
		l[placementv1beta1.LabelIsLatestSnapshot] = "false"
		s.SetLabels(l)
		if err := r.Client.Patch(ctx, s, patch, client.FieldOwner(ManagerOverrideSnapshot)); err != nil {
			return ctrl.Result{}, fmt.Errorf("failed to mark override snapshot %s not latest: %w", s.GetName(), err)
		}
	}
	history := r.History
	if history <= 0 {
		history = DefaultSnapshotHistory
	}
	for len(existing) > history {
		if err := client.IgnoreNotFound(r.Client.Delete(ctx, existing[0])); err != nil {
			return ctrl.Result{}, fmt.Errorf("failed to delete old override snapshot %s: %w", existing[0].GetName(), err)
		}
		existing = existing[1:]
	}
	return ctrl.Result{}, r.observe(ctx, k, o, existing[len(existing)-1])
}

// observe records in the override's status the generation whose snapshot
// rollouts now use, when it changed.
func (r *SnapshotReconciler) observe(ctx context.Context, k kinds, o, latest client.Object) error {
	want := placementv1beta1.OverrideStatus{ObservedGeneration: o.GetGeneration(), LatestSnapshot: latest.GetName()}
	if *k.status(o) == want {
		return nil
	}
	patch := client.MergeFrom(o.DeepCopyObject().(client.Object))
	*k.status(o) = want
	if err := r.Client.Status().Patch(ctx, o, patch, client.FieldOwner(ManagerOverrideSnapshot)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("failed to record the observed generation: %w", err)
	}
	return nil
}

// reconcileDelete deletes a deleted override's snapshots, then lets it go.
func (r *SnapshotReconciler) reconcileDelete(ctx context.Context, o client.Object, existing []client.Object) error {
	if !controllerutil.ContainsFinalizer(o, placementv1beta1.OverrideSnapshotCleanupFinalizer) {
		return nil
	}
	for _, s := range existing {
		if err := client.IgnoreNotFound(r.Client.Delete(ctx, s)); err != nil {
			return fmt.Errorf("failed to delete override snapshot %s: %w", s.GetName(), err)
		}
	}
	return pipeline.RemoveFinalizer(ctx, r.Client, o, placementv1beta1.OverrideSnapshotCleanupFinalizer, ManagerOverrideSnapshot)
}

// list returns an override's snapshots by index.
func (r *SnapshotReconciler) list(ctx context.Context, k kinds, o client.Object) ([]client.Object, error) {
	l := k.snapshotList()
	opts := []client.ListOption{client.MatchingLabels{placementv1beta1.LabelOverrideName: o.GetName()}}
	if o.GetNamespace() != "" {
		opts = append(opts, client.InNamespace(o.GetNamespace()))
	}
	if err := r.Client.List(ctx, l, opts...); err != nil {
		return nil, fmt.Errorf("failed to list the snapshots of override %s: %w", o.GetName(), err)
	}
	out := k.snapshots(l)
	sort.Slice(out, func(i, j int) bool { return Index(out[i]) < Index(out[j]) })
	return out, nil
}

// Index is an override snapshot's index, -1 if it has none.
func Index(s metav1.Object) int {
	i, err := strconv.Atoi(s.GetLabels()[placementv1beta1.LabelOverrideIndex])
	if err != nil {
		return -1
	}
	return i
}

func (r *SnapshotReconciler) kinds() kinds {
	if r.Cluster {
		return clusterKinds{}
	}
	return namespacedKinds{}
}

// SetupWithManager registers the controller: overrides (spec changes and
// deletion) and their snapshots (a snapshot deleted by hand is made again).
func (r *SnapshotReconciler) SetupWithManager(mgr ctrl.Manager) error {
	k := r.kinds()
	name := "resourceoverride-snapshot"
	var snapshot client.Object = &placementv1beta1.ResourceOverrideSnapshot{}
	if r.Cluster {
		name, snapshot = "clusterresourceoverride-snapshot", &placementv1beta1.ClusterResourceOverrideSnapshot{}
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		For(k.override(), builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.Funcs{
			UpdateFunc: func(e ctrlevent.UpdateEvent) bool { return !e.ObjectNew.GetDeletionTimestamp().IsZero() },
		}))).
		Watches(snapshot, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, s client.Object) []reconcile.Request {
			n := s.GetLabels()[placementv1beta1.LabelOverrideName]
			if n == "" {
				return nil
			}
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: s.GetNamespace(), Name: n}}}
		}), builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(ctrlevent.CreateEvent) bool { return false },
			UpdateFunc: func(ctrlevent.UpdateEvent) bool { return false },
		})).
		Complete(r)
}

type clusterKinds struct{}

func (clusterKinds) override() client.Object { return &placementv1beta1.ClusterResourceOverride{} }
func (clusterKinds) spec(o client.Object) any {
	return o.(*placementv1beta1.ClusterResourceOverride).Spec
}
func (clusterKinds) snapshotList() client.ObjectList {
	return &placementv1beta1.ClusterResourceOverrideSnapshotList{}
}
func (clusterKinds) snapshots(l client.ObjectList) []client.Object {
	items := l.(*placementv1beta1.ClusterResourceOverrideSnapshotList).Items
	out := make([]client.Object, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}
func (clusterKinds) newSnapshot(o client.Object, name, hash string) (client.Object, error) {
	return &placementv1beta1.ClusterResourceOverrideSnapshot{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.ClusterResourceOverrideSnapshotSpec{
			OverrideSpec: *o.(*placementv1beta1.ClusterResourceOverride).Spec.DeepCopy(), OverrideHash: hash,
		},
	}, nil
}
func (clusterKinds) hash(s client.Object) string {
	return s.(*placementv1beta1.ClusterResourceOverrideSnapshot).Spec.OverrideHash
}
func (clusterKinds) status(o client.Object) *placementv1beta1.OverrideStatus {
	return &o.(*placementv1beta1.ClusterResourceOverride).Status
}

type namespacedKinds struct{}

func (namespacedKinds) override() client.Object { return &placementv1beta1.ResourceOverride{} }
func (namespacedKinds) spec(o client.Object) any {
	return o.(*placementv1beta1.ResourceOverride).Spec
}
func (namespacedKinds) snapshotList() client.ObjectList {
	return &placementv1beta1.ResourceOverrideSnapshotList{}
}
func (namespacedKinds) snapshots(l client.ObjectList) []client.Object {
	items := l.(*placementv1beta1.ResourceOverrideSnapshotList).Items
	out := make([]client.Object, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}
func (namespacedKinds) newSnapshot(o client.Object, name, hash string) (client.Object, error) {
	return &placementv1beta1.ResourceOverrideSnapshot{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: o.GetNamespace()},
		Spec: placementv1beta1.ResourceOverrideSnapshotSpec{
			OverrideSpec: *o.(*placementv1beta1.ResourceOverride).Spec.DeepCopy(), OverrideHash: hash,
		},
	}, nil
}
func (namespacedKinds) hash(s client.Object) string {
	return s.(*placementv1beta1.ResourceOverrideSnapshot).Spec.OverrideHash
}
func (namespacedKinds) status(o client.Object) *placementv1beta1.OverrideStatus {
	return &o.(*placementv1beta1.ResourceOverride).Status
}
