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

package pipeline

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// ResourceSnapshotSet is one resource index of a placement: the master snapshot
// (the first of the set, which carries the hash and the number of snapshots) and
// the others in sub-index order. A selection too large for one object is split
// across several snapshots of the same index.
type ResourceSnapshotSet struct {
	// Master is the first snapshot of the set; bindings name it.
	Master placementv1beta1.ResourceSnapshotObj
	// Parts are every snapshot of the set, master first, then by sub-index.
	Parts []placementv1beta1.ResourceSnapshotObj
}

// Index is the set's resource index.
func (s *ResourceSnapshotSet) Index() string {
	return s.Master.GetLabels()[placementv1beta1.LabelResourceIndex]
}

// Resources are the selected resources of every part, in order.
func (s *ResourceSnapshotSet) Resources() []placementv1beta1.ResourceContent {
	var out []placementv1beta1.ResourceContent
	for _, p := range s.Parts {
		out = append(out, p.GetResourceSnapshotSpec().SelectedResources...)
	}
	return out
}

// IsMaster reports whether a resource snapshot is the first of its set.
func IsMaster(s metav1.Object) bool {
	_, sub := s.GetAnnotations()[placementv1beta1.AnnotationSubindexOfResourceSnapshot]
	return !sub
}

// subindex is a snapshot's position in its set: 0 for the master.
func subindex(s metav1.Object) int {
	i, err := strconv.Atoi(s.GetAnnotations()[placementv1beta1.AnnotationSubindexOfResourceSnapshot])
	if err != nil {
		return 0
	}
	return i
}

// LatestResourceSnapshot returns the master of the placement's latest resource
// snapshot set, or nil when there is none yet.
func LatestResourceSnapshot(ctx context.Context, r client.Reader, k PlacementKey) (placementv1beta1.ResourceSnapshotObj, error) {
	list, err := ListResourceSnapshots(ctx, r, k, map[string]string{placementv1beta1.LabelIsLatestSnapshot: "true"})
	if err != nil {
		return nil, err
	}
	var latest placementv1beta1.ResourceSnapshotObj
	for _, s := range list {
		if IsMaster(s) && (latest == nil || indexOf(s, placementv1beta1.LabelResourceIndex) > indexOf(latest, placementv1beta1.LabelResourceIndex)) {
			latest = s
		}
	}
	return latest, nil
}

// indexOf reads a snapshot's index label; -1 when it has none.
func indexOf(s metav1.Object, label string) int {
	i, err := strconv.Atoi(s.GetLabels()[label])
	if err != nil {
		return -1
	}
	return i
}

// ResourceSnapshotSetOf returns the whole set of a master snapshot. It fails
// when parts are missing (still being created, or deleted), so that nobody acts
// on half a selection.
func ResourceSnapshotSetOf(ctx context.Context, r client.Reader, master placementv1beta1.ResourceSnapshotObj) (*ResourceSnapshotSet, error) {
	want, err := strconv.Atoi(master.GetAnnotations()[placementv1beta1.AnnotationNumberOfResourceSnapshots])
	if err != nil || want < 1 {
		want = 1
	}
	set := &ResourceSnapshotSet{Master: master, Parts: []placementv1beta1.ResourceSnapshotObj{master}}
	if want == 1 {
		return set, nil
	}
	key, _ := OwnerKey(master)
	key.Namespace = master.GetNamespace()
	index := master.GetLabels()[placementv1beta1.LabelResourceIndex]
	list, err := ListResourceSnapshots(ctx, r, key, map[string]string{placementv1beta1.LabelResourceIndex: index})
	if err != nil {
		return nil, fmt.Errorf("failed to list the resource snapshots of index %s: %w", index, err)
	}
	var parts []placementv1beta1.ResourceSnapshotObj
	for _, s := range list {
		if !IsMaster(s) {
			parts = append(parts, s)
		}
	}
	sort.Slice(parts, func(i, j int) bool { return subindex(parts[i]) < subindex(parts[j]) })
	if len(parts) != want-1 {
		return nil, fmt.Errorf("resource snapshot %s is one of %d, but %d of the others exist", master.GetName(), want, len(parts))
	}
	set.Parts = append(set.Parts, parts...)
	return set, nil
}

// LatestPolicySnapshot returns the placement's latest scheduling policy
// snapshot, or nil when there is none yet.
func LatestPolicySnapshot(ctx context.Context, r client.Reader, k PlacementKey) (placementv1beta1.PolicySnapshotObj, error) {
	list, err := ListPolicySnapshots(ctx, r, k, map[string]string{placementv1beta1.LabelIsLatestSnapshot: "true"})
	if err != nil {
		return nil, err
	}
	var latest placementv1beta1.PolicySnapshotObj
	for _, s := range list {
		if latest == nil || indexOf(s, placementv1beta1.LabelPolicyIndex) > indexOf(latest, placementv1beta1.LabelPolicyIndex) {
			latest = s
		}
	}
	return latest, nil
}
