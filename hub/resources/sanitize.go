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

package resources

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Sanitize returns a copy of a hub object fit to be created on a member: no
// server-set metadata, no status, and none of the fields each cluster allocates
// for itself (a Service's cluster IPs and node ports, a PVC's volume).
func Sanitize(in *unstructured.Unstructured) *unstructured.Unstructured {
	u := in.DeepCopy()
	for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp",
		"managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences", "finalizers", "generateName"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	if ann := u.GetAnnotations(); ann != nil {
		delete(ann, "kubectl.kubernetes.io/last-applied-configuration")
		delete(ann, "deployment.kubernetes.io/revision")
		if len(ann) == 0 {
			ann = nil
		}
		u.SetAnnotations(ann)
	}
	unstructured.RemoveNestedField(u.Object, "status")
	gvk := u.GroupVersionKind()
	switch {
	case gvk.Group == "" && gvk.Kind == "Namespace":
		unstructured.RemoveNestedField(u.Object, "spec", "finalizers")
	case gvk.Group == "" && gvk.Kind == "Service":
		unstructured.RemoveNestedField(u.Object, "spec", "clusterIP")
		unstructured.RemoveNestedField(u.Object, "spec", "clusterIPs")
		unstructured.RemoveNestedField(u.Object, "spec", "healthCheckNodePort")
		if ports, found, _ := unstructured.NestedSlice(u.Object, "spec", "ports"); found {
			for _, p := range ports {
				if pm, ok := p.(map[string]any); ok {
					delete(pm, "nodePort")
				}
			}
			_ = unstructured.SetNestedSlice(u.Object, ports, "spec", "ports")
		}
	case gvk.Group == "" && gvk.Kind == "PersistentVolumeClaim":
		unstructured.RemoveNestedField(u.Object, "spec", "volumeName")
	case gvk.Group == "batch" && gvk.Kind == "Job":
		// The job controller adds a selector and labels keyed by the hub's UID.
		unstructured.RemoveNestedField(u.Object, "spec", "selector")
		unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "labels", "controller-uid")
		unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "labels", "batch.kubernetes.io/controller-uid")
	}
	return u
}
