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

// Package envelope unwraps envelope objects: a ConfigMap annotated
// placement.flotilla.io/envelope-configmap: "true" (manifests as YAML or JSON
// strings), a ClusterResourceEnvelope or a ResourceEnvelope (manifests as objects)
// carries manifests in its data, one per key, so that objects which must not take
// effect on the hub (webhooks, ClusterRoleBindings, quotas, ...) can be placed.
// Members receive the manifests inside, never the envelope.
package envelope

import (
	"encoding/json"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Is reports whether an object is an envelope.
func Is(obj *unstructured.Unstructured) bool {
	return isConfigMap(obj) || isEnvelopeKind(obj)
}

func isConfigMap(obj *unstructured.Unstructured) bool {
	return obj.GetAPIVersion() == "v1" && obj.GetKind() == "ConfigMap" &&
		obj.GetAnnotations()[placementv1beta1.AnnotationEnvelopeConfigMap] == "true"
}

func isEnvelopeKind(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Group == placementv1beta1.GroupVersion.Group && (gvk.Kind == "ClusterResourceEnvelope" || gvk.Kind == "ResourceEnvelope")
}

// describe names an envelope in messages.
func describe(obj *unstructured.Unstructured) string {
	kind := obj.GetKind()
	if isConfigMap(obj) {
		kind = "envelope ConfigMap"
	}
	if ns := obj.GetNamespace(); ns != "" {
		return kind + " " + ns + "/" + obj.GetName()
	}
	return kind + " " + obj.GetName()
}

// Error is a manifest in an envelope that cannot be read.
type Error struct {
	// Envelope names the envelope: its kind and namespace/name.
	Envelope string
	// Key is the data key that holds the manifest.
	Key string
	// Err is what is wrong with it.
	Err error
}

func (e *Error) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s: %v", e.Envelope, e.Err)
	}
	return fmt.Sprintf("%s key %q: %v", e.Envelope, e.Key, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Expand returns the manifests of an envelope, as JSON, in the order of their
// keys. Each value must be one object (YAML or JSON) with apiVersion, kind and
// metadata.name; a namespaced object without a namespace gets none here (it is
// applied to the member's default namespace), so give each its namespace.
func Expand(obj *unstructured.Unstructured) ([][]byte, error) {
	name := describe(obj)
	data, err := manifests(obj)
	if err != nil {
		return nil, &Error{Envelope: name, Err: err}
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([][]byte, 0, len(keys))
	for _, k := range keys {
		raw, err := yaml.YAMLToJSON(data[k])
		if err != nil {
			return nil, &Error{Envelope: name, Key: k, Err: fmt.Errorf("not a YAML or JSON manifest: %w", err)}
		}
		inner := &unstructured.Unstructured{}
		if err := inner.UnmarshalJSON(raw); err != nil {
			return nil, &Error{Envelope: name, Key: k, Err: fmt.Errorf("not a Kubernetes object: %w", err)}
		}
		if inner.GetName() == "" {
			return nil, &Error{Envelope: name, Key: k, Err: fmt.Errorf("%s has no metadata.name", inner.GetKind())}
		}
		if Is(inner) {
			return nil, &Error{Envelope: name, Key: k, Err: fmt.Errorf("envelopes cannot be nested")}
		}
		if obj.GetKind() == "ResourceEnvelope" {
			// A ResourceEnvelope carries objects of its own namespace.
			switch inner.GetNamespace() {
			case "":
				inner.SetNamespace(obj.GetNamespace())
				if raw, err = inner.MarshalJSON(); err != nil {
					return nil, &Error{Envelope: name, Key: k, Err: err}
				}
			case obj.GetNamespace():
			default:
				return nil, &Error{Envelope: name, Key: k, Err: fmt.Errorf("%s is in namespace %s; a ResourceEnvelope carries objects of its own namespace", inner.GetKind(), inner.GetNamespace())}
			}
		}
		out = append(out, raw)
	}
	return out, nil
}

// manifests returns an envelope's manifests by key: a ConfigMap's strings, an
// envelope kind's objects as JSON.
func manifests(obj *unstructured.Unstructured) (map[string][]byte, error) {
	out := map[string][]byte{}
	if isConfigMap(obj) {
		data, _, err := unstructured.NestedStringMap(obj.Object, "data")
		if err != nil {
			return nil, fmt.Errorf("data is not a map of strings: %w", err)
		}
		for k, v := range data {
			out[k] = []byte(v)
		}
		return out, nil
	}
	data, _, err := unstructured.NestedMap(obj.Object, "data")
	if err != nil {
		return nil, fmt.Errorf("data is not a map of objects: %w", err)
	}
	for k, v := range data {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		out[k] = raw
	}
	return out, nil
}

// Unwrap replaces every envelope among manifests (JSON) by the manifests inside
// it, keeping the order. The first envelope that cannot be read fails it with an
// *Error.
func Unwrap(manifests [][]byte) ([][]byte, error) {
	out := make([][]byte, 0, len(manifests))
	for _, m := range manifests {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(m); err != nil || !Is(obj) {
			out = append(out, m)
			continue
		}
		inner, err := Expand(obj)
		if err != nil {
			return nil, err
		}
		out = append(out, inner...)
	}
	return out, nil
}
