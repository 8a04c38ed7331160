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

package availability

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Result is the availability of one object, ready to become an Available condition.
type Result struct {
	// Available is True when the object is available (or cannot be tracked), False
	// when it is not available yet. Check never returns Unknown; callers use it for
	// objects they could not look at.
	Available metav1.ConditionStatus
	// Reason is placementv1beta1.ReasonAvailable, ReasonNotTrackable or
	// ReasonNotAvailableYet.
	Reason string
	// Message says why, for people: "2/3 replicas available, 3/3 updated".
	Message string
}

// IsAvailable reports whether the result counts as available (Available or not
// trackable).
func (r Result) IsAvailable() bool {
	return r.Available == metav1.ConditionTrue
}

// checker decides the availability of one kind.
type checker func(obj *unstructured.Unstructured) Result

// Kinds whose availability is tracked, by group and kind.
var checkers = map[schema.GroupKind]checker{
	{Group: "apps", Kind: "Deployment"}:                               deploymentAvailability,
	{Group: "apps", Kind: "StatefulSet"}:                              statefulSetAvailability,
	{Group: "apps", Kind: "DaemonSet"}:                                daemonSetAvailability,
	{Group: "batch", Kind: "Job"}:                                     jobAvailability,
	{Group: "", Kind: "Service"}:                                      serviceAvailability,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: crdAvailability,
	{Group: "policy", Kind: "PodDisruptionBudget"}:                    pdbAvailability,
	{Group: "", Kind: "PersistentVolumeClaim"}:                        pvcAvailability,
	{Group: "", Kind: "Namespace"}:                                    namespaceAvailability,
	{Group: "", Kind: "ConfigMap"}:                                    availableOnceApplied,
	{Group: "", Kind: "Secret"}:                                       availableOnceApplied,
	{Group: "", Kind: "ServiceAccount"}:                               availableOnceApplied,
	{Group: "", Kind: "ResourceQuota"}:                                availableOnceApplied,
	{Group: "", Kind: "LimitRange"}:                                   availableOnceApplied,
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:                availableOnceApplied,
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:         availableOnceApplied,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:         availableOnceApplied,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:  availableOnceApplied,
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}:               availableOnceApplied,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:                availableOnceApplied,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:               availableOnceApplied,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                   availableOnceApplied,
}

// Trackable reports whether Check knows how to tell the availability of a kind.
func Trackable(gk schema.GroupKind) bool {
	_, ok := checkers[gk]
	return ok
}

// Check returns the availability of obj, as its member cluster's API server returned
// it. A nil obj does not exist, and an object being deleted is going away: neither is
// available.
func Check(obj *unstructured.Unstructured) Result {
	if obj == nil {
		return notAvailable("the object does not exist")
	}
	if obj.GetDeletionTimestamp() != nil {
		return notAvailable("the object is being deleted")
	}
	c, ok := checkers[obj.GroupVersionKind().GroupKind()]
	if !ok {
		return Result{
			Available: metav1.ConditionTrue,
			Reason:    placementv1beta1.ReasonNotTrackable,
			Message:   fmt.Sprintf("the availability of %s cannot be tracked; it is taken as available once applied", kindOf(obj)),
		}
	}
	return c(obj)
}

func available(format string, args ...any) Result {
	return Result{Available: metav1.ConditionTrue, Reason: placementv1beta1.ReasonAvailable, Message: fmt.Sprintf(format, args...)}
}

func notAvailable(format string, args ...any) Result {
	return Result{Available: metav1.ConditionFalse, Reason: placementv1beta1.ReasonNotAvailableYet, Message: fmt.Sprintf(format, args...)}
}

func kindOf(obj *unstructured.Unstructured) string {
	gk := obj.GroupVersionKind().GroupKind()
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

func availableOnceApplied(obj *unstructured.Unstructured) Result {
	return available("%s is available once applied", kindOf(obj))
}
