package pipeline

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// ResourceSnapshotSet is one resource index of a placement: the master snapshot
// (the first of the set, which carries the hash and the number of snapshots) and
// the others in sub-index order. A selection too large for one object is split
// across several snapshots of the same index.
type ResourceSnapshotSet struct {
	// Master is the first snapshot of the set; bindings name it.
	Master *placementv1beta1.ClusterResourceSnapshot
	// Parts are every snapshot of the set, master first, then by sub-index.
	Parts []*placementv1beta1.ClusterResourceSnapshot
}

// Index is the set's resource index.
func (s *ResourceSnapshotSet) Index() string {
	return s.Master.Labels[placementv1beta1.LabelResourceIndex]
}

// Resources are the selected resources of every part, in order.
func (s *ResourceSnapshotSet) Resources() []placementv1beta1.ResourceContent {
	var out []placementv1beta1.ResourceContent
	for _, p := range s.Parts {
		out = append(out, p.Spec.SelectedResources...)
	}
	return out
}

// IsMaster reports whether a resource snapshot is the first of its set.
func IsMaster(s *placementv1beta1.ClusterResourceSnapshot) bool {
	_, sub := s.Annotations[placementv1beta1.AnnotationSubindexOfResourceSnapshot]
	return !sub
}

// subindex is a snapshot's position in its set: 0 for the master.
func subindex(s *placementv1beta1.ClusterResourceSnapshot) int {
	i, err := strconv.Atoi(s.Annotations[placementv1beta1.AnnotationSubindexOfResourceSnapshot])
	if err != nil {
		return 0
	}
	return i
}

// LatestResourceSnapshot returns the master of the placement's latest resource
// snapshot set, or nil when there is none yet.
func LatestResourceSnapshot(ctx context.Context, r client.Reader, placement string) (*placementv1beta1.ClusterResourceSnapshot, error) {
	list := &placementv1beta1.ClusterResourceSnapshotList{}
	if err := r.List(ctx, list, client.MatchingLabels{
		placementv1beta1.LabelPlacementName:    placement,
		placementv1beta1.LabelIsLatestSnapshot: "true",
	}); err != nil {
		return nil, fmt.Errorf("failed to list the resource snapshots of %s: %w", placement, err)
	}
	var latest *placementv1beta1.ClusterResourceSnapshot
	for i := range list.Items {
		s := &list.Items[i]
		if IsMaster(s) && (latest == nil || resourceIndex(s) > resourceIndex(latest)) {
			latest = s
		}
	}
	return latest, nil
}

func resourceIndex(s *placementv1beta1.ClusterResourceSnapshot) int {
	i, err := strconv.Atoi(s.Labels[placementv1beta1.LabelResourceIndex])
	if err != nil {
		return -1
	}
	return i
}

// ResourceSnapshotSetOf returns the whole set of a master snapshot. It fails
// when parts are missing (still being created, or deleted), so that nobody acts
// on half a selection.
func ResourceSnapshotSetOf(ctx context.Context, r client.Reader, master *placementv1beta1.ClusterResourceSnapshot) (*ResourceSnapshotSet, error) {
	want, err := strconv.Atoi(master.Annotations[placementv1beta1.AnnotationNumberOfResourceSnapshots])
	if err != nil || want < 1 {
		want = 1
	}
	set := &ResourceSnapshotSet{Master: master, Parts: []*placementv1beta1.ClusterResourceSnapshot{master}}
	if want == 1 {
		return set, nil
	}
	list := &placementv1beta1.ClusterResourceSnapshotList{}
	if err := r.List(ctx, list, client.MatchingLabels{
		placementv1beta1.LabelPlacementName: master.Labels[placementv1beta1.LabelPlacementName],
		placementv1beta1.LabelResourceIndex: master.Labels[placementv1beta1.LabelResourceIndex],
	}); err != nil {
		return nil, fmt.Errorf("failed to list the resource snapshots of index %s: %w", master.Labels[placementv1beta1.LabelResourceIndex], err)
	}
	var parts []*placementv1beta1.ClusterResourceSnapshot
	for i := range list.Items {
		if !IsMaster(&list.Items[i]) {
			parts = append(parts, &list.Items[i])
		}
	}
	sort.Slice(parts, func(i, j int) bool { return subindex(parts[i]) < subindex(parts[j]) })
	if len(parts) != want-1 {
		return nil, fmt.Errorf("resource snapshot %s is one of %d, but %d of the others exist", master.Name, want, len(parts))
	}
	set.Parts = append(set.Parts, parts...)
	return set, nil
}

// LatestPolicySnapshot returns the placement's latest scheduling policy
// snapshot, or nil when there is none yet.
func LatestPolicySnapshot(ctx context.Context, r client.Reader, placement string) (*placementv1beta1.ClusterSchedulingPolicySnapshot, error) {
	list := &placementv1beta1.ClusterSchedulingPolicySnapshotList{}
	if err := r.List(ctx, list, client.MatchingLabels{
		placementv1beta1.LabelPlacementName:    placement,
		placementv1beta1.LabelIsLatestSnapshot: "true",
	}); err != nil {
		return nil, fmt.Errorf("failed to list the policy snapshots of %s: %w", placement, err)
	}
	var latest *placementv1beta1.ClusterSchedulingPolicySnapshot
	for i := range list.Items {
		s := &list.Items[i]
		if latest == nil || policyIndex(s) > policyIndex(latest) {
			latest = s
		}
	}
	return latest, nil
}

func policyIndex(s *placementv1beta1.ClusterSchedulingPolicySnapshot) int {
	i, err := strconv.Atoi(s.Labels[placementv1beta1.LabelPolicyIndex])
	if err != nil {
		return -1
	}
	return i
}
