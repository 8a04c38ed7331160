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
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Record is what the Applier keeps on the member for one Work.
type Record struct {
	// WorkName is the name of the Work.
	WorkName string
	// Hash is the SpecHash of the spec last applied; empty if no apply of the Work
	// has finished (the agent stopped in the middle of the first one).
	Hash string
	// DeletePolicy is the Work's delete strategy at that apply: what Remove does with
	// the objects.
	DeletePolicy placementv1beta1.DeletePropagationPolicy
	// TakenOverPolicy is what the Work's delete strategy at that apply does with the
	// objects it took over; Release for records written before it existed.
	TakenOverPolicy placementv1beta1.TakenOverPolicy
	// AllApplied is true when every manifest of that spec was applied (and nothing
	// was left to clean up); otherwise the next Apply of the same spec tries again.
	AllApplied bool
	// Applied are the objects applied for the Work that are still the Work's, in the
	// order they were applied.
	Applied []ObjectRef
	// Work is the Work of that apply (its name, namespace, labels, annotations,
	// generation and spec; see recordedWork), kept so that an agent that restarts
	// can go on watching the Work without the hub sending it again (Resumable).
	// Nil for a Work too large to keep (RecordWorkLimit) and for records written
	// before it existed.
	Work *placementv1beta1.Work
}

// RecordWorkLimit is the largest Work, as JSON, that a record keeps (a
// ConfigMap holds at most 1 MiB); a larger one is sent again by the hub after
// the agent restarts.
const RecordWorkLimit = 512 << 10

// Resumable reports whether the record holds the Work it describes, applied in
// full: an agent that restarts can report it to the hub as held (with Hash)
// and go on from the record's Work, without the hub sending it again. The
// kept Work must hash to Hash: a record whose Work and hash disagree is not
// trusted.
func (r *Record) Resumable() bool {
	return r.AllApplied && r.Hash != "" && r.Work != nil && r.Work.Name == r.WorkName && SpecHash(r.Work) == r.Hash
}

// recordedWork is what a record keeps of work: what the agent uses of a Work
// besides its spec (name, namespace, labels, annotations, generation), without
// its status or server fields. Nil when its JSON is over RecordWorkLimit.
func recordedWork(work *placementv1beta1.Work) *placementv1beta1.Work {
	if work == nil {
		return nil
	}
	kept := &placementv1beta1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Name: work.Name, Namespace: work.Namespace, Labels: work.Labels, Annotations: work.Annotations, Generation: work.Generation,
		},
		Spec: work.Spec,
	}
	kept.SetGroupVersionKind(placementv1beta1.GroupVersion.WithKind("Work"))
	if b, err := json.Marshal(kept); err != nil || len(b) > RecordWorkLimit {
		return nil
	}
	return kept
}

// ObjectRef refers to an object on the member cluster, and says whether the Work
// created it or took it over.
type ObjectRef struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`

	// Created is true when the Work created the object: it did not exist on the
	// member when the Work first applied it. False when the Work took it over, and
	// for the objects of records written before the field existed: what an old
	// record cannot prove the Work created counts as taken over (see createdBy).
	Created bool `json:"created,omitempty"`
	// UID is the UID of the object as applied; an object of the same name with
	// another UID (deleted and created again by someone else) is not the one the
	// Work created. Empty until the apply that writes the object is recorded.
	UID types.UID `json:"uid,omitempty"`
	// GuardedAt is when the object was recorded before it was applied (guardRecord),
	// for an object whose apply has not been recorded yet: an object created since,
	// that carries the Work's annotation, was created by the Work (an agent stopped
	// between the create and the record). RFC 3339, whole seconds.
	GuardedAt string `json:"guardedAt,omitempty"`
}

// createdBy reports whether the object live, which carries the annotation of the
// Work of the record, is the object the Work created:
//   - an applied object recorded as created, with live's UID;
//   - an object recorded before it was applied (GuardedAt), whose apply was never
//     recorded (the agent stopped), created in that second or later. Only an
//     object someone else created in the second before the Work's first apply, that
//     the Work then took over before the agent stopped, would be taken for created.
//
// Anything else — an object the Work took over, one created again by someone else
// (another UID), the objects of records written before Created existed — is taken
// over: an object Flotilla cannot prove it created is never deleted as created.
func (r ObjectRef) createdBy(live *unstructured.Unstructured) bool {
	switch {
	case r.Created && r.UID != "":
		return r.UID == live.GetUID()
	case r.GuardedAt != "":
		guarded, err := time.Parse(time.RFC3339, r.GuardedAt)
		return err == nil && !live.GetCreationTimestamp().Time.Before(guarded)
	default:
		return false
	}
}

func (r ObjectRef) key() objectKey {
	return objectKey{group: r.Group, kind: r.Kind, namespace: r.Namespace, name: r.Name}
}

func (r ObjectRef) String() string {
	return kindString(schema.GroupKind{Group: r.Group, Kind: r.Kind}) + " " + nameString(r.Namespace, r.Name)
}

// Keys of the record ConfigMap's data.
const (
	dataWork         = "work"
	dataSpecHash     = "specHash"
	dataDeletePolicy = "deletePolicy"
	dataTakenOver    = "takenOver"
	dataAllApplied   = "allApplied"
	dataApplied      = "applied"
	dataWorkObject   = "workObject"
)

var configMapGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
var namespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// recordName returns the name of the record ConfigMap of a Work: work-<name>, or, when
// that is too long for a name, a shortened name with a hash of the full one.
func recordName(workName string) string {
	name := "work-" + workName
	if len(name) <= validation.DNS1123SubdomainMaxLength {
		return name
	}
	sum := sha256.Sum256([]byte(workName))
	return strings.TrimRight(name[:validation.DNS1123SubdomainMaxLength-17], ".-") + "-" + hex.EncodeToString(sum[:8])
}

// getRecord returns the record of a Work, or nil if there is none.
func (a *Applier) getRecord(ctx context.Context, workName string) (*Record, error) {
	cm, err := a.dynamic.Resource(configMapGVR).Namespace(a.opts.Namespace).Get(ctx, recordName(workName), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to get the record of Work %q: %w", workName, err)
	}
	return recordFromConfigMap(cm)
}

// listRecords returns every record in the record namespace.
func (a *Applier) listRecords(ctx context.Context) ([]Record, error) {
	selector := labels.SelectorFromSet(labels.Set{labelManagedBy: managedByAgent, labelComponent: componentWorkRecord})
	list, err := a.dynamic.Resource(configMapGVR).Namespace(a.opts.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return nil, fmt.Errorf("failed to list the Work records: %w", err)
	}
	out := make([]Record, 0, len(list.Items))
	for i := range list.Items {
		r, err := recordFromConfigMap(&list.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	slices.SortFunc(out, func(x, y Record) int { return strings.Compare(x.WorkName, y.WorkName) })
	return out, nil
}

// putRecord writes the record of a Work, creating the record namespace if needed.
func (a *Applier) putRecord(ctx context.Context, r *Record) error {
	cm, err := r.configMap(a.opts.Namespace)
	if err != nil {
		return err
	}
	apply := func() error {
		_, err := a.dynamic.Resource(configMapGVR).Namespace(a.opts.Namespace).Apply(ctx, cm.GetName(), cm,
			metav1.ApplyOptions{FieldManager: a.opts.FieldManager, Force: true})
		return err
	}
	err = apply()
	if apierrors.IsNotFound(err) {
		if err := a.ensureRecordNamespace(ctx); err != nil {
			return err
		}
		err = apply()
	}
	if err != nil {
		return fmt.Errorf("failed to write the record of Work %q: %w", r.WorkName, err)
	}
	return nil
}

func (a *Applier) ensureRecordNamespace(ctx context.Context) error {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(a.opts.Namespace)
	ns.SetLabels(map[string]string{labelManagedBy: managedByAgent})
	_, err := a.dynamic.Resource(namespaceGVR).Create(ctx, ns, metav1.CreateOptions{FieldManager: a.opts.FieldManager})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("failed to create the record namespace %q: %w", a.opts.Namespace, err)
	}
	return nil
}

// deleteRecord deletes the record of a Work; a missing record is not an error.
func (a *Applier) deleteRecord(ctx context.Context, workName string) error {
	err := a.dynamic.Resource(configMapGVR).Namespace(a.opts.Namespace).Delete(ctx, recordName(workName), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("failed to delete the record of Work %q: %w", workName, err)
	}
	return nil
}

// configMap returns the ConfigMap that stores r.
func (r *Record) configMap(namespace string) (*unstructured.Unstructured, error) {
	applied, err := json.Marshal(r.Applied)
	if err != nil {
		return nil, fmt.Errorf("failed to encode the record of Work %q: %w", r.WorkName, err)
	}
	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetNamespace(namespace)
	cm.SetName(recordName(r.WorkName))
	cm.SetLabels(map[string]string{labelManagedBy: managedByAgent, labelComponent: componentWorkRecord})
	data := map[string]any{
		dataWork:         r.WorkName,
		dataSpecHash:     r.Hash,
		dataDeletePolicy: string(r.DeletePolicy),
		dataTakenOver:    string(r.TakenOverPolicy),
		dataAllApplied:   strconv.FormatBool(r.AllApplied),
		dataApplied:      string(applied),
	}
	if r.Work != nil {
		b, err := json.Marshal(r.Work)
		if err != nil {
			return nil, fmt.Errorf("failed to encode the record of Work %q: %w", r.WorkName, err)
		}
		data[dataWorkObject] = string(b)
	}
	if err := unstructured.SetNestedField(cm.Object, data, "data"); err != nil {
		return nil, fmt.Errorf("failed to encode the record of Work %q: %w", r.WorkName, err)
	}
	return cm, nil
}

func recordFromConfigMap(cm *unstructured.Unstructured) (*Record, error) {
	data, _, err := unstructured.NestedStringMap(cm.Object, "data")
	if err != nil {
		return nil, fmt.Errorf("failed to read the Work record %s: %w", cm.GetName(), err)
	}
	r := &Record{
		WorkName:     data[dataWork],
		Hash:         data[dataSpecHash],
		DeletePolicy: placementv1beta1.DeletePropagationPolicy(data[dataDeletePolicy]),
		AllApplied:   data[dataAllApplied] == "true",
		// Records written before the field existed release what the Work took over.
		TakenOverPolicy: placementv1beta1.TakenOverPolicyRelease,
	}
	if p := data[dataTakenOver]; p != "" {
		r.TakenOverPolicy = placementv1beta1.TakenOverPolicy(p)
	}
	if r.WorkName == "" {
		return nil, fmt.Errorf("failed to read the Work record %s: it names no Work", cm.GetName())
	}
	if s := data[dataApplied]; s != "" {
		if err := json.Unmarshal([]byte(s), &r.Applied); err != nil {
			return nil, fmt.Errorf("failed to read the Work record %s: %w", cm.GetName(), err)
		}
	}
	if s := data[dataWorkObject]; s != "" {
		// A kept Work that does not decode is only a Work the hub sends again.
		w := &placementv1beta1.Work{}
		if err := json.Unmarshal([]byte(s), w); err == nil {
			r.Work = w
		}
	}
	return r, nil
}

// equal reports whether two records hold the same.
func (r *Record) equal(o *Record) bool {
	return o != nil && r.WorkName == o.WorkName && r.Hash == o.Hash && r.DeletePolicy == o.DeletePolicy && r.TakenOverPolicy == o.TakenOverPolicy &&
		r.AllApplied == o.AllApplied && slices.Equal(r.Applied, o.Applied) && keptHash(r) == keptHash(o)
}

// keptHash is the hash of the Work a record keeps; "" for none.
func keptHash(r *Record) string {
	if r.Work == nil {
		return ""
	}
	return SpecHash(r.Work)
}
