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

package clusteraffinity

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
)

// PropertyValue returns the value of a cluster property: the reported property of
// that name if there is one, else the resource property derived from the cluster's
// resource usage. ok is false if the cluster has no such property or its value is
// not a quantity.
func PropertyValue(mc *clusterv1beta1.MemberCluster, name string) (q resource.Quantity, ok bool) {
	if p, found := mc.Status.Properties[name]; found {
		q, err := resource.ParseQuantity(p.Value)
		return q, err == nil
	}
	u := &mc.Status.ResourceUsage
	var list corev1.ResourceList
	var res corev1.ResourceName
	switch name {
	case clusterv1beta1.PropertyTotalCPU:
		list, res = u.Capacity, corev1.ResourceCPU
	case clusterv1beta1.PropertyTotalMemory:
		list, res = u.Capacity, corev1.ResourceMemory
	case clusterv1beta1.PropertyAllocatableCPU:
		list, res = u.Allocatable, corev1.ResourceCPU
	case clusterv1beta1.PropertyAllocatableMemory:
		list, res = u.Allocatable, corev1.ResourceMemory
	case clusterv1beta1.PropertyAvailableCPU:
		list, res = u.Available, corev1.ResourceCPU
	case clusterv1beta1.PropertyAvailableMemory:
		list, res = u.Available, corev1.ResourceMemory
	default:
		return q, false
	}
	q, ok = list[res]
	return q, ok
}
