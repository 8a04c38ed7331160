// Package envelope unwraps envelope objects: a ConfigMap annotated
// placement.flotilla.io/envelope-configmap: "true" carries manifests in its data,
// one per key, so that objects which must not take effect on the hub (webhooks,
// ClusterRoleBindings, quotas, ...) can be placed. Members receive the manifests
// inside, never the envelope.
package envelope

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Is reports whether an object is an envelope.
func Is(obj *unstructured.Unstructured) bool {
	return obj.GetAPIVersion() == "v1" && obj.GetKind() == "ConfigMap" &&
		obj.GetAnnotations()[placementv1beta1.AnnotationEnvelopeConfigMap] == "true"
}

// Error is a manifest in an envelope that cannot be read.
type Error struct {
	// Envelope names the envelope (namespace/name).
	Envelope string
	// Key is the data key that holds the manifest.
	Key string
	// Err is what is wrong with it.
	Err error
}

func (e *Error) Error() string {
	return fmt.Sprintf("envelope ConfigMap %s key %q: %v", e.Envelope, e.Key, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Expand returns the manifests of an envelope, as JSON, in the order of their
// keys. Each value must be one object (YAML or JSON) with apiVersion, kind and
// metadata.name; a namespaced object without a namespace gets none here (it is
// applied to the member's default namespace), so give each its namespace.
func Expand(obj *unstructured.Unstructured) ([][]byte, error) {
	name := obj.GetNamespace() + "/" + obj.GetName()
	data, _, err := unstructured.NestedStringMap(obj.Object, "data")
	if err != nil {
		return nil, &Error{Envelope: name, Err: fmt.Errorf("data is not a map of strings: %w", err)}
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([][]byte, 0, len(keys))
	for _, k := range keys {
		raw, err := yaml.YAMLToJSON([]byte(data[k]))
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
		out = append(out, raw)
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
