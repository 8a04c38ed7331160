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

package apply

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

var (
	namespaceGK = schema.GroupKind{Group: "", Kind: "Namespace"}
	crdGK       = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
	crdGVR      = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// manifest is one manifest of a Work, decoded.
type manifest struct {
	// ordinal is the index of the manifest in the Work.
	ordinal int
	// obj is the object to apply, without the fields that must not be applied; nil
	// when the manifest could not be decoded (see err).
	obj *unstructured.Unstructured
	// gvk is the manifest's group, version and kind.
	gvk schema.GroupVersionKind
	// mapping is the manifest's resource, set once resolved.
	mapping *meta.RESTMapping
	// err is why the manifest cannot be applied at all, such as invalid JSON.
	err error
}

// decodeManifests decodes every manifest of a Work; a manifest that cannot be decoded
// gets its error and no object.
func decodeManifests(work *placementv1beta1.Work) []*manifest {
	out := make([]*manifest, 0, len(work.Spec.Workload.Manifests))
	for i, m := range work.Spec.Workload.Manifests {
		mf := &manifest{ordinal: i}
		obj, err := decodeManifest(m)
		if err != nil {
			mf.err = fmt.Errorf("failed to decode the manifest: %w", err)
		} else {
			sanitize(obj)
			mf.obj = obj
			mf.gvk = obj.GroupVersionKind()
		}
		out = append(out, mf)
	}
	return out
}

func decodeManifest(m placementv1beta1.Manifest) (*unstructured.Unstructured, error) {
	raw := m.Raw
	if raw == nil && m.Object != nil {
		b, err := json.Marshal(m.Object)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	if len(raw) == 0 {
		return nil, errors.New("the manifest is empty")
	}
	// Check the identifying fields first, for clearer errors than the decoder's.
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name         string `json:"name"`
			GenerateName string `json:"generateName"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, err
	}
	switch {
	case head.APIVersion == "":
		return nil, errors.New("apiVersion is not set")
	case head.Kind == "":
		return nil, errors.New("kind is not set")
	case head.Metadata.Name == "" && head.Metadata.GenerateName != "":
		return nil, errors.New("metadata.name is not set; metadata.generateName is not supported")
	case head.Metadata.Name == "":
		return nil, errors.New("metadata.name is not set")
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	if _, err := schema.ParseGroupVersion(obj.GetAPIVersion()); err != nil {
		return nil, err
	}
	return obj, nil
}

// sanitize removes the fields that must not be applied: those the member's API server
// owns (identity, versions, timestamps, managed fields, status) and owner references,
// whose UIDs are the hub's and mean nothing on a member.
func sanitize(obj *unstructured.Unstructured) {
	for _, f := range []string{
		"resourceVersion", "uid", "creationTimestamp", "managedFields", "generation",
		"selfLink", "deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences",
	} {
		unstructured.RemoveNestedField(obj.Object, "metadata", f)
	}
	delete(obj.Object, "status")
}

// applyOrder returns the manifests in the order they are applied: Namespaces, then
// CustomResourceDefinitions, then the rest, each group in manifest order.
func applyOrder(manifests []*manifest) []*manifest {
	out := append([]*manifest(nil), manifests...)
	sort.SliceStable(out, func(i, j int) bool { return tier(out[i]) < tier(out[j]) })
	return out
}

func tier(m *manifest) int {
	switch m.gvk.GroupKind() {
	case namespaceGK:
		return 0
	case crdGK:
		return 1
	default:
		return 2
	}
}

// identifier returns the identifier of a manifest for its status.
func (m *manifest) identifier() placementv1beta1.WorkResourceIdentifier {
	id := placementv1beta1.WorkResourceIdentifier{Ordinal: m.ordinal}
	if m.obj == nil {
		return id
	}
	id.Group, id.Version, id.Kind = m.gvk.Group, m.gvk.Version, m.gvk.Kind
	id.Namespace, id.Name = m.obj.GetNamespace(), m.obj.GetName()
	if m.mapping != nil {
		id.Resource = m.mapping.Resource.Resource
	}
	return id
}

// ref returns the reference a record keeps to the object of a mapped manifest.
func (m *manifest) ref() ObjectRef {
	return ObjectRef{
		Group:     m.gvk.Group,
		Version:   m.gvk.Version,
		Kind:      m.gvk.Kind,
		Resource:  m.mapping.Resource.Resource,
		Namespace: m.obj.GetNamespace(),
		Name:      m.obj.GetName(),
	}
}

// key identifies the object of a manifest across versions of its kind; manifests that
// could not be decoded have none.
func (m *manifest) key() (objectKey, bool) {
	if m.obj == nil {
		return objectKey{}, false
	}
	return objectKey{group: m.gvk.Group, kind: m.gvk.Kind, namespace: m.obj.GetNamespace(), name: m.obj.GetName()}, true
}

// describe names the manifest's object for messages: "Deployment app/web (manifest 2)".
func (m *manifest) describe() string {
	if m.obj == nil {
		return fmt.Sprintf("manifest %d", m.ordinal)
	}
	return fmt.Sprintf("%s %s (manifest %d)", kindString(m.gvk.GroupKind()), nameString(m.obj.GetNamespace(), m.obj.GetName()), m.ordinal)
}

// setScope fixes the namespace of the manifest's object according to the scope of its
// resource: cluster-scoped objects have none, namespaced ones must have one.
func (m *manifest) setScope(mapping *meta.RESTMapping) error {
	if mapping.Scope.Name() == meta.RESTScopeNameRoot {
		m.obj.SetNamespace("")
		return nil
	}
	if m.obj.GetNamespace() == "" {
		return fmt.Errorf("%s is namespaced but metadata.namespace is not set", kindString(m.gvk.GroupKind()))
	}
	return nil
}

// crdServes returns the group and kind of the custom resources a CRD manifest
// defines.
func (m *manifest) crdServes() (schema.GroupKind, bool) {
	if m.obj == nil || m.gvk.GroupKind() != crdGK {
		return schema.GroupKind{}, false
	}
	group, _, _ := unstructured.NestedString(m.obj.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(m.obj.Object, "spec", "names", "kind")
	if kind == "" {
		return schema.GroupKind{}, false
	}
	return schema.GroupKind{Group: group, Kind: kind}, true
}

// objectKey identifies an object independently of the version it is served at.
type objectKey struct {
	group, kind, namespace, name string
}

func kindString(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

func nameString(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
