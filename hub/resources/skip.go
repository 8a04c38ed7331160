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
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// skippedGroups are API groups whose objects describe the hub cluster itself, are
// generated from other objects, or are Flotilla's own bookkeeping.
var skippedGroups = map[string]bool{
	"events.k8s.io":         true,
	"coordination.k8s.io":   true, // leases: per-cluster liveness
	"discovery.k8s.io":      true, // endpoint slices: generated from Services
	"metrics.k8s.io":        true,
	"authentication.k8s.io": true,
	"authorization.k8s.io":  true,
	"certificates.k8s.io":   true, // CSRs are signed per cluster
	"resource.k8s.io":       true,
	"cluster.flotilla.io":   true,
	"placement.flotilla.io": true,
}

// envelopeResources are the kinds of placement.flotilla.io that are selectable:
// envelopes exist to be placed (members receive what is inside them).
var envelopeResources = map[schema.GroupResource]bool{
	{Group: placementv1beta1.GroupVersion.Group, Resource: "clusterresourceenvelopes"}: true,
	{Group: placementv1beta1.GroupVersion.Group, Resource: "resourceenvelopes"}:        true,
}

// skippedResources are kinds (by group/resource) that belong to one cluster only
// or are created by controllers from kinds that are copied.
var skippedResources = map[schema.GroupResource]bool{
	{Group: "", Resource: "events"}:                                                  true,
	{Group: "", Resource: "pods"}:                                                    true, // made by workload controllers on each member
	{Group: "", Resource: "nodes"}:                                                   true,
	{Group: "", Resource: "endpoints"}:                                               true,
	{Group: "", Resource: "componentstatuses"}:                                       true,
	{Group: "", Resource: "bindings"}:                                                true,
	{Group: "", Resource: "persistentvolumes"}:                                       true, // bound to one cluster's storage
	{Group: "apps", Resource: "controllerrevisions"}:                                 true,
	{Group: "apps", Resource: "replicasets"}:                                         true, // owned by Deployments
	{Group: "flowcontrol.apiserver.k8s.io", Resource: "flowschemas"}:                 true,
	{Group: "flowcontrol.apiserver.k8s.io", Resource: "prioritylevelconfigurations"}: true,
}

// skippedNamespaces are never selected, nor is anything in them; the reserved
// namespaces (ReservedNamespace) are not either.
var skippedNamespaces = map[string]bool{
	"local-path-storage": true,
}

// ReservedNamespace returns why a namespace is reserved, or "" if it is not. A
// reserved namespace is never placed, nor is anything in it, and a placement
// that names one is refused: kube-* namespaces belong to each cluster's
// Kubernetes, flotilla-system is Flotilla's own, and flotilla-member-* hold the
// hub's Work for each member cluster.
func ReservedNamespace(name string) string {
	switch {
	case strings.HasPrefix(name, "kube-"):
		return "kube-* namespaces belong to each cluster's own Kubernetes system"
	case name == clusterv1beta1.HubNamespace:
		return "it is Flotilla's own namespace on every cluster"
	case isMemberNamespace(name):
		return "flotilla-member-* namespaces hold the hub's Work for each member cluster"
	}
	return ""
}

// rootCAConfigMap is published into every namespace by the controller-manager of
// each cluster; the member makes its own.
const rootCAConfigMap = "kube-root-ca.crt"

// SkipObject reports whether an object must not be copied to members, with the
// reason (for logs).
func SkipObject(obj *unstructured.Unstructured) (bool, string) {
	if obj.GetDeletionTimestamp() != nil {
		return true, "being deleted"
	}
	if skippedNamespaces[obj.GetNamespace()] || ReservedNamespace(obj.GetNamespace()) != "" {
		return true, "in a system namespace"
	}
	if obj.GetKind() == "Namespace" && obj.GetAPIVersion() == "v1" && (skippedNamespaces[obj.GetName()] || ReservedNamespace(obj.GetName()) != "") {
		return true, "a system namespace"
	}
	if isMemberNamespace(obj.GetNamespace()) {
		return true, "in a member's Work namespace"
	}
	if from := obj.GetLabels()[placementv1beta1.LabelUpsyncedFrom]; from != "" {
		return true, "a mirror upsynced from member " + from
	}
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			return true, "created by a controller from " + ref.Kind + " " + ref.Name
		}
	}
	if obj.GetAPIVersion() == "v1" {
		switch obj.GetKind() {
		case "ConfigMap":
			if obj.GetName() == rootCAConfigMap {
				return true, "the cluster's own root CA"
			}
		case "Secret":
			t, _, _ := unstructured.NestedString(obj.Object, "type")
			if t == string(corev1.SecretTypeServiceAccountToken) {
				return true, "a service-account token of this cluster"
			}
		case "ServiceAccount":
			if obj.GetName() == "default" {
				return true, "made by every cluster in every namespace"
			}
		}
	}
	return false, ""
}

func isMemberNamespace(ns string) bool {
	return strings.HasPrefix(ns, clusterv1beta1.MemberNamespacePrefix)
}

// selectable reports whether a placement may select objects of a resource.
func selectable(gr schema.GroupResource) bool {
	if skippedGroups[gr.Group] && !envelopeResources[gr] {
		return false
	}
	return !skippedResources[gr]
}
