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

package placement

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/resources"
)

// maxSnapshotBytes keeps a resource snapshot well under etcd's object size limit.
const maxSnapshotBytes = 1_000_000

// cacheBehindRetry is how soon a reconcile that found the cache behind what
// this process created looks again.
const cacheBehindRetry = 200 * time.Millisecond

// snapshotKind tells the two kinds of snapshot apart in Reconciler.created.
type snapshotKind int

const (
	policySnapshots snapshotKind = iota
	resourceSnapshots
)

type snapshotKey struct {
	placement pipeline.PlacementKey
	kind      snapshotKind
}

// cacheBehind reports whether this process created a snapshot of kind for
// the placement at a newer index than latestIndex, the newest its cached
// list shows. Deciding on such a list would give a new set the index of the
// one just created: its parts would be written beside that set's master
// (parts go first) and the master's creation would fail, leaving an index
// whose parts disagree with its master.
func (r *Reconciler) cacheBehind(key pipeline.PlacementKey, kind snapshotKind, latestIndex int) bool {
	v, ok := r.created.Load(snapshotKey{key, kind})
	return ok && v.(int) > latestIndex
}

// recordCreated remembers that this process created index idx.
func (r *Reconciler) recordCreated(key pipeline.PlacementKey, kind snapshotKind, idx int) {
	r.created.Store(snapshotKey{key, kind}, idx)
}

// forgetCreated drops what recordCreated remembered of a placement that is gone.
func (r *Reconciler) forgetCreated(key pipeline.PlacementKey) {
	r.created.Delete(snapshotKey{key, policySnapshots})
	r.created.Delete(snapshotKey{key, resourceSnapshots})
}

// hashOf returns the hex sha256 of v's JSON.
func hashOf(v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

func snapshotIndex(obj metav1.Object, label string) int {
	i, err := strconv.Atoi(obj.GetLabels()[label])
	if err != nil {
		return -1
	}
	return i
}

// ensurePolicySnapshot makes the latest scheduling policy snapshot of the
// placement (a ClusterSchedulingPolicySnapshot, or a SchedulingPolicySnapshot in
// a ResourcePlacement's namespace) hold its current policy, creating a new one
// (and demoting the old) when the policy changed.
func (r *Reconciler) ensurePolicySnapshot(ctx context.Context, s *scope) error {
	p := s.placement
	spec := p.GetPlacementSpec()
	gen := strconv.FormatInt(p.GetGeneration(), 10)
	hash, err := hashOf(spec.Policy)
	if err != nil {
		return fmt.Errorf("failed to hash the policy: %w", err)
	}
	list, err := pipeline.ListPolicySnapshots(ctx, r.Client, s.key, nil)
	if err != nil {
		return err
	}
	latestIndex := -1
	for _, snap := range list {
		latestIndex = max(latestIndex, snapshotIndex(snap, placementv1beta1.LabelPolicyIndex))
	}
	if r.cacheBehind(s.key, policySnapshots, latestIndex) {
		s.cacheBehind = true
		return nil
	}
	for _, snap := range list {
		if snap.GetLabels()[placementv1beta1.LabelIsLatestSnapshot] != "true" {
			continue
		}
		if string(snap.GetPolicySnapshotSpec().PolicyHash) == hash {
			s.policySnapshot = snap
			// The same policy at a newer generation (e.g. a label change): record
			// the generation so the Scheduled condition can report it.
			if snap.GetAnnotations()[placementv1beta1.AnnotationPlacementGeneration] != gen {
				patch := client.MergeFrom(snap.DeepCopyObject().(client.Object))
				setAnnotation(snap, placementv1beta1.AnnotationPlacementGeneration, gen)
				if err := r.Client.Patch(ctx, snap, patch, client.FieldOwner(pipeline.ManagerPlacement)); err != nil {
					return fmt.Errorf("failed to update policy snapshot %s: %w", snap.GetName(), err)
				}
			}
			continue
		}
		if err := r.demote(ctx, snap); err != nil {
			return err
		}
	}
	if s.policySnapshot != nil {
		return r.prunePolicySnapshots(ctx, s, list)
	}
	idx := latestIndex + 1
	snap := pipeline.NewPolicySnapshot(s.key)
	snap.SetName(fmt.Sprintf("%s-%d", s.key.Name, idx))
	labels := s.key.Labels()
	labels[placementv1beta1.LabelIsLatestSnapshot] = "true"
	labels[placementv1beta1.LabelPolicyIndex] = strconv.Itoa(idx)
	snap.SetLabels(labels)
	annotations := map[string]string{placementv1beta1.AnnotationPlacementGeneration: gen}
	if pol := spec.Policy; pol != nil && pol.NumberOfClusters != nil {
		annotations[placementv1beta1.AnnotationNumberOfClusters] = strconv.Itoa(int(*pol.NumberOfClusters))
	}
	snap.SetAnnotations(annotations)
	*snap.GetPolicySnapshotSpec() = placementv1beta1.SchedulingPolicySnapshotSpec{Policy: spec.Policy.DeepCopy(), PolicyHash: []byte(hash)}
	if err := controllerutil.SetControllerReference(p, snap, r.Scheme); err != nil {
		return err
	}
	if err := r.Client.Create(ctx, snap, client.FieldOwner(pipeline.ManagerPlacement)); err != nil {
		return fmt.Errorf("failed to create policy snapshot %s: %w", snap.GetName(), err)
	}
	r.recordCreated(s.key, policySnapshots, idx)
	s.policySnapshot = snap
	r.startChange(s)
	return r.prunePolicySnapshots(ctx, s, append(list, snap))
}

func setAnnotation(o metav1.Object, key, value string) {
	a := o.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[key] = value
	o.SetAnnotations(a)
}

// prunePolicySnapshots keeps the newest revisionHistoryLimit policy snapshots.
func (r *Reconciler) prunePolicySnapshots(ctx context.Context, s *scope, snaps []placementv1beta1.PolicySnapshotObj) error {
	objs := make([]client.Object, 0, len(snaps))
	for _, snap := range snaps {
		objs = append(objs, snap)
	}
	return r.prune(ctx, objs, placementv1beta1.LabelPolicyIndex, historyLimit(s.placement))
}

func historyLimit(p placementv1beta1.PlacementObj) int {
	if l := p.GetPlacementSpec().RevisionHistoryLimit; l != nil && *l > 0 {
		return int(*l)
	}
	return 10
}

// prune deletes the oldest non-latest snapshots beyond limit.
func (r *Reconciler) prune(ctx context.Context, objs []client.Object, indexLabel string, limit int) error {
	if len(objs) <= limit {
		return nil
	}
	sort.Slice(objs, func(i, j int) bool {
		return snapshotIndex(objs[i], indexLabel) < snapshotIndex(objs[j], indexLabel)
	})
	for _, o := range objs[:len(objs)-limit] {
		if o.GetLabels()[placementv1beta1.LabelIsLatestSnapshot] == "true" {
			continue
		}
		if err := client.IgnoreNotFound(r.Client.Delete(ctx, o)); err != nil {
			return fmt.Errorf("failed to delete old snapshot %s: %w", o.GetName(), err)
		}
	}
	return nil
}

// ensureResourceSnapshot makes the latest resource snapshot set hold exactly
// the selected resources, creating a new set (the next index) when they
// changed. A selection larger than one object holds is split across several
// snapshots of the same index (KubeFleet's sub-indexes): the master
// <placement>-<index>-snapshot, which carries the hash and the number of
// snapshots, and <placement>-<index>-<subindex> for the others. When selection
// failed, the latest set stays as it is.
func (r *Reconciler) ensureResourceSnapshot(ctx context.Context, s *scope) error {
	crp := s.placement
	list, err := pipeline.ListResourceSnapshots(ctx, r.Client, s.key, nil)
	if err != nil {
		return err
	}
	if s.selectErr != nil {
		for _, snap := range list {
			if snap.GetLabels()[placementv1beta1.LabelIsLatestSnapshot] == "true" && pipeline.IsMaster(snap) {
				s.resourceSnapshot = snap
			}
		}
		return nil
	}
	contents := make([]placementv1beta1.ResourceContent, 0, len(s.selected))
	for _, u := range s.selected {
		data, err := json.Marshal(resources.Sanitize(u).Object)
		if err != nil {
			return fmt.Errorf("failed to encode %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		if len(data) > maxSnapshotBytes {
			return fmt.Errorf("%s %s takes %d bytes, more than one snapshot object holds (%d)", u.GetKind(), u.GetName(), len(data), maxSnapshotBytes)
		}
		contents = append(contents, placementv1beta1.ResourceContent{RawExtension: runtime.RawExtension{Raw: data}})
	}
	hash, err := hashOf(contents)
	if err != nil {
		return fmt.Errorf("failed to hash the selected resources: %w", err)
	}
	latestIndex := -1
	for _, snap := range list {
		latestIndex = max(latestIndex, snapshotIndex(snap, placementv1beta1.LabelResourceIndex))
	}
	if r.cacheBehind(s.key, resourceSnapshots, latestIndex) {
		s.cacheBehind = true
		return nil
	}
	for _, snap := range list {
		if snap.GetLabels()[placementv1beta1.LabelIsLatestSnapshot] != "true" {
			continue
		}
		if pipeline.IsMaster(snap) && snap.GetAnnotations()[placementv1beta1.AnnotationResourceHash] == hash {
			s.resourceSnapshot = snap
		}
	}
	if s.resourceSnapshot != nil {
		// The latest set still holds the selection; demote any other set still
		// labelled latest (a set whose creation was interrupted).
		current := s.resourceSnapshot.GetLabels()[placementv1beta1.LabelResourceIndex]
		for _, snap := range list {
			if snap.GetLabels()[placementv1beta1.LabelIsLatestSnapshot] == "true" && snap.GetLabels()[placementv1beta1.LabelResourceIndex] != current {
				if err := r.demote(ctx, snap); err != nil {
					return err
				}
			}
		}
		return r.pruneResourceSnapshots(ctx, list, historyLimit(crp))
	}
	for _, snap := range list {
		if snap.GetLabels()[placementv1beta1.LabelIsLatestSnapshot] == "true" {
			if err := r.demote(ctx, snap); err != nil {
				return err
			}
		}
	}
	idx := latestIndex + 1
	parts := splitContents(contents, maxSnapshotBytes)
	// The other parts first, the master last: readers look for the master, and
	// find a complete set once it exists.
	for sub := len(parts) - 1; sub >= 0; sub-- {
		snap := pipeline.NewResourceSnapshot(s.key)
		snap.SetName(fmt.Sprintf("%s-%d-%d", s.key.Name, idx, sub))
		labels := s.key.Labels()
		labels[placementv1beta1.LabelIsLatestSnapshot] = "true"
		labels[placementv1beta1.LabelResourceIndex] = strconv.Itoa(idx)
		snap.SetLabels(labels)
		snap.SetAnnotations(map[string]string{placementv1beta1.AnnotationSubindexOfResourceSnapshot: strconv.Itoa(sub)})
		*snap.GetResourceSnapshotSpec() = placementv1beta1.ResourceSnapshotSpec{SelectedResources: parts[sub]}
		if sub == 0 {
			snap.SetName(fmt.Sprintf("%s-%d-snapshot", s.key.Name, idx))
			snap.SetAnnotations(map[string]string{
				placementv1beta1.AnnotationResourceHash:              hash,
				placementv1beta1.AnnotationNumberOfResourceSnapshots: strconv.Itoa(len(parts)),
			})
		}
		if err := controllerutil.SetControllerReference(crp, snap, r.Scheme); err != nil {
			return err
		}
		if err := r.Client.Create(ctx, snap, client.FieldOwner(pipeline.ManagerPlacement)); err != nil {
			return fmt.Errorf("failed to create resource snapshot %s: %w", snap.GetName(), err)
		}
		list = append(list, snap)
		if sub == 0 {
			s.resourceSnapshot = snap
		}
	}
	r.recordCreated(s.key, resourceSnapshots, idx)
	r.startChange(s)
	r.Recorder.Eventf(crp, s.resourceSnapshot, corev1.EventTypeNormal, "ResourceSnapshotCreated", "Snapshot",
		"Selected resources changed: created snapshot %s (index %d, %d objects in %d snapshots)", s.resourceSnapshot.GetName(), idx, len(contents), len(parts))
	return r.pruneResourceSnapshots(ctx, list, historyLimit(crp))
}

// splitContents packs the resources, in order, into parts of at most limit bytes
// each (every resource alone fits); there is always at least one part.
func splitContents(contents []placementv1beta1.ResourceContent, limit int) [][]placementv1beta1.ResourceContent {
	parts := [][]placementv1beta1.ResourceContent{nil}
	size := 0
	for _, c := range contents {
		if size+len(c.Raw) > limit && len(parts[len(parts)-1]) > 0 {
			parts = append(parts, nil)
			size = 0
		}
		parts[len(parts)-1] = append(parts[len(parts)-1], c)
		size += len(c.Raw)
	}
	return parts
}

// demote marks a snapshot (of either kind) as no longer the latest.
func (r *Reconciler) demote(ctx context.Context, snap client.Object) error {
	patch := client.MergeFrom(snap.DeepCopyObject().(client.Object))
	labels := snap.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[placementv1beta1.LabelIsLatestSnapshot] = "false"
	snap.SetLabels(labels)
	if err := r.Client.Patch(ctx, snap, patch, client.FieldOwner(pipeline.ManagerPlacement)); err != nil {
		return fmt.Errorf("failed to demote snapshot %s: %w", snap.GetName(), err)
	}
	return nil
}

// pruneResourceSnapshots deletes every snapshot of the oldest indexes beyond
// limit, never of the latest set.
func (r *Reconciler) pruneResourceSnapshots(ctx context.Context, snaps []placementv1beta1.ResourceSnapshotObj, limit int) error {
	byIndex := map[int][]placementv1beta1.ResourceSnapshotObj{}
	var indexes []int
	for _, snap := range snaps {
		idx := snapshotIndex(snap, placementv1beta1.LabelResourceIndex)
		if _, ok := byIndex[idx]; !ok {
			indexes = append(indexes, idx)
		}
		byIndex[idx] = append(byIndex[idx], snap)
	}
	if len(indexes) <= limit {
		return nil
	}
	sort.Ints(indexes)
	for _, idx := range indexes[:len(indexes)-limit] {
		for _, snap := range byIndex[idx] {
			if snap.GetLabels()[placementv1beta1.LabelIsLatestSnapshot] == "true" {
				continue
			}
			if err := client.IgnoreNotFound(r.Client.Delete(ctx, snap)); err != nil {
				return fmt.Errorf("failed to delete old snapshot %s: %w", snap.GetName(), err)
			}
		}
	}
	return nil
}

// identifiers lists the selected objects for status.selectedResources.
func identifiers(objs []*unstructured.Unstructured) []placementv1beta1.ResourceIdentifier {
	out := make([]placementv1beta1.ResourceIdentifier, 0, len(objs))
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		out = append(out, placementv1beta1.ResourceIdentifier{
			Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
			Name: u.GetName(), Namespace: u.GetNamespace(),
		})
	}
	return out
}
