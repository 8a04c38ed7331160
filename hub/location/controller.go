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

// Package location keeps each Location's status (kcp): how many MemberClusters its
// instance selector picks, and how many of those can take workloads now.
package location

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// Reconciler counts a Location's instances.
type Reconciler struct {
	Client client.Client
}

// Reconcile handles one Location.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	loc := &clusterv1beta1.Location{}
	if err := r.Client.Get(ctx, req.NamespacedName, loc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	clusters := &clusterv1beta1.MemberClusterList{}
	if err := r.Client.List(ctx, clusters); err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to list member clusters: %w", err)
	}
	before := loc.DeepCopy()
	instances, available, err := Count(loc, clusters.Items)
	if err != nil {
		conditions.Set(&loc.Status.Conditions, clusterv1beta1.ConditionLocationReady, metav1.ConditionFalse, clusterv1beta1.ReasonInvalidInstanceSelector, err.Error(), loc.Generation)
	} else {
		loc.Status.Instances = instances
		loc.Status.AvailableInstances = available
		conditions.Set(&loc.Status.Conditions, clusterv1beta1.ConditionLocationReady, metav1.ConditionTrue, clusterv1beta1.ReasonInstancesCounted,
			fmt.Sprintf("%d of %d instances available", available, instances), loc.Generation)
	}
	if equality.Semantic.DeepEqual(before.Status, loc.Status) {
		return ctrl.Result{}, nil
	}
	// The location controller is the only writer of a Location's status.
	if err := r.Client.Status().Patch(ctx, loc, client.MergeFrom(before)); err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to update location status: %w", err)
	}
	return ctrl.Result{}, nil
}

// Count returns how many clusters the Location selects and how many of those are
// available: joined, connected and healthy, and not leaving.
func Count(loc *clusterv1beta1.Location, clusters []clusterv1beta1.MemberCluster) (instances, available int32, err error) {
	sel, err := metav1.LabelSelectorAsSelector(&loc.Spec.InstanceSelector)
	if err != nil {
		return 0, 0, fmt.Errorf("instanceSelector is invalid: %w", err)
	}
	for i := range clusters {
		mc := &clusters[i]
		if !sel.Matches(labels.Set(mc.Labels)) {
			continue
		}
		instances++
		if mc.DeletionTimestamp.IsZero() &&
			conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionJoined) &&
			conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected) &&
			conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionHealthy) {
			available++
		}
	}
	return instances, available, nil
}

// SetupWithManager registers the controller; every MemberCluster change may
// change any Location's counts.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	allLocations := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		list := &clusterv1beta1.LocationList{}
		if err := mgr.GetClient().List(ctx, list); err != nil {
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(list.Items))
		for _, l := range list.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: l.Name}})
		}
		return reqs
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("location").
		For(&clusterv1beta1.Location{}).
		Watches(&clusterv1beta1.MemberCluster{}, allLocations).
		Complete(r)
}
