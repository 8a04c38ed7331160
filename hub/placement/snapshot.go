package placement

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

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

// ensurePolicySnapshot makes the latest ClusterSchedulingPolicySnapshot of the
// placement hold its current policy, creating a new one (and demoting the old)
// when the policy changed.
func (r *Reconciler) ensurePolicySnapshot(ctx context.Context, s *scope) error {
	crp := s.placement
	hash, err := hashOf(crp.Spec.Policy)
	if err != nil {
		return fmt.Errorf("failed to hash the policy: %w", err)
	}
	list := &placementv1beta1.ClusterSchedulingPolicySnapshotList{}
	if err := r.Client.List(ctx, list, client.MatchingLabels{placementv1beta1.LabelPlacementName: crp.Name}); err != nil {
		return fmt.Errorf("failed to list policy snapshots: %w", err)
	}
	latestIndex := -1
	for i := range list.Items {
		snap := &list.Items[i]
		idx := snapshotIndex(snap, placementv1beta1.LabelPolicyIndex)
		if idx > latestIndex {
			latestIndex = idx
		}
		if snap.Labels[placementv1beta1.LabelIsLatestSnapshot] != "true" {
			continue
		}
		if string(snap.Spec.PolicyHash) == hash {
			s.policySnapshot = snap
			// The same policy at a newer generation (e.g. a label change): record
			// the generation so the Scheduled condition can report it.
			if snap.Annotations[placementv1beta1.AnnotationPlacementGeneration] != strconv.FormatInt(crp.Generation, 10) {
				patch := client.MergeFrom(snap.DeepCopy())
				metav1.SetMetaDataAnnotation(&snap.ObjectMeta, placementv1beta1.AnnotationPlacementGeneration, strconv.FormatInt(crp.Generation, 10))
				if err := r.Client.Patch(ctx, snap, patch, client.FieldOwner(pipeline.ManagerPlacement)); err != nil {
					return fmt.Errorf("failed to update policy snapshot %s: %w", snap.Name, err)
				}
			}
			continue
		}
		patch := client.MergeFrom(snap.DeepCopy())
		snap.Labels[placementv1beta1.LabelIsLatestSnapshot] = "false"
		if err := r.Client.Patch(ctx, snap, patch, client.FieldOwner(pipeline.ManagerPlacement)); err != nil {
			return fmt.Errorf("failed to demote policy snapshot %s: %w", snap.Name, err)
		}
	}
	if s.policySnapshot != nil {
		return r.prunePolicySnapshots(ctx, s, list.Items)
	}
	idx := latestIndex + 1
	snap := &placementv1beta1.ClusterSchedulingPolicySnapshot{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-%d", crp.Name, idx),
			Labels: map[string]string{
				placementv1beta1.LabelPlacementName:    crp.Name,
				placementv1beta1.LabelIsLatestSnapshot: "true",
				placementv1beta1.LabelPolicyIndex:      strconv.Itoa(idx),
			},
			Annotations: map[string]string{
				placementv1beta1.AnnotationPlacementGeneration: strconv.FormatInt(crp.Generation, 10),
			},
		},
		Spec: placementv1beta1.SchedulingPolicySnapshotSpec{Policy: crp.Spec.Policy.DeepCopy(), PolicyHash: []byte(hash)},
	}
	if p := crp.Spec.Policy; p != nil && p.NumberOfClusters != nil {
		snap.Annotations[placementv1beta1.AnnotationNumberOfClusters] = strconv.Itoa(int(*p.NumberOfClusters))
	}
	if err := controllerutil.SetControllerReference(crp, snap, r.Scheme); err != nil {
		return err
	}
	if err := r.Client.Create(ctx, snap, client.FieldOwner(pipeline.ManagerPlacement)); err != nil {
		return fmt.Errorf("failed to create policy snapshot %s: %w", snap.Name, err)
	}
	s.policySnapshot = snap
	r.changed(crp.Name)
	return r.prunePolicySnapshots(ctx, s, append(list.Items, *snap))
}

// prunePolicySnapshots keeps the newest revisionHistoryLimit policy snapshots.
func (r *Reconciler) prunePolicySnapshots(ctx context.Context, s *scope, snaps []placementv1beta1.ClusterSchedulingPolicySnapshot) error {
	objs := make([]client.Object, 0, len(snaps))
	for i := range snaps {
		objs = append(objs, &snaps[i])
	}
	return r.prune(ctx, objs, placementv1beta1.LabelPolicyIndex, historyLimit(s.placement))
}

func historyLimit(crp *placementv1beta1.ClusterResourcePlacement) int {
	if crp.Spec.RevisionHistoryLimit != nil && *crp.Spec.RevisionHistoryLimit > 0 {
		return int(*crp.Spec.RevisionHistoryLimit)
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
	list := &placementv1beta1.ClusterResourceSnapshotList{}
	if err := r.Client.List(ctx, list, client.MatchingLabels{placementv1beta1.LabelPlacementName: crp.Name}); err != nil {
		return fmt.Errorf("failed to list resource snapshots: %w", err)
	}
	if s.selectErr != nil {
		for i := range list.Items {
			snap := &list.Items[i]
			if snap.Labels[placementv1beta1.LabelIsLatestSnapshot] == "true" && pipeline.IsMaster(snap) {
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
	for i := range list.Items {
		snap := &list.Items[i]
		idx := snapshotIndex(snap, placementv1beta1.LabelResourceIndex)
		if idx > latestIndex {
			latestIndex = idx
		}
		if snap.Labels[placementv1beta1.LabelIsLatestSnapshot] != "true" {
			continue
		}
		if pipeline.IsMaster(snap) && snap.Annotations[placementv1beta1.AnnotationResourceHash] == hash {
			s.resourceSnapshot = snap
		}
	}
	if s.resourceSnapshot != nil {
		// The latest set still holds the selection; demote any other set still
		// labelled latest (a set whose creation was interrupted).
		current := s.resourceSnapshot.Labels[placementv1beta1.LabelResourceIndex]
		for i := range list.Items {
			snap := &list.Items[i]
			if snap.Labels[placementv1beta1.LabelIsLatestSnapshot] == "true" && snap.Labels[placementv1beta1.LabelResourceIndex] != current {
				if err := r.demote(ctx, snap); err != nil {
					return err
				}
			}
		}
		return r.pruneResourceSnapshots(ctx, list.Items, historyLimit(crp))
	}
	for i := range list.Items {
		if snap := &list.Items[i]; snap.Labels[placementv1beta1.LabelIsLatestSnapshot] == "true" {
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
		snap := &placementv1beta1.ClusterResourceSnapshot{
			ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("%s-%d-%d", crp.Name, idx, sub),
				Labels: map[string]string{
					placementv1beta1.LabelPlacementName:    crp.Name,
					placementv1beta1.LabelIsLatestSnapshot: "true",
					placementv1beta1.LabelResourceIndex:    strconv.Itoa(idx),
				},
				Annotations: map[string]string{placementv1beta1.AnnotationSubindexOfResourceSnapshot: strconv.Itoa(sub)},
			},
			Spec: placementv1beta1.ResourceSnapshotSpec{SelectedResources: parts[sub]},
		}
		if sub == 0 {
			snap.Name = fmt.Sprintf("%s-%d-snapshot", crp.Name, idx)
			snap.Annotations = map[string]string{
				placementv1beta1.AnnotationResourceHash:              hash,
				placementv1beta1.AnnotationNumberOfResourceSnapshots: strconv.Itoa(len(parts)),
			}
		}
		if err := controllerutil.SetControllerReference(crp, snap, r.Scheme); err != nil {
			return err
		}
		if err := r.Client.Create(ctx, snap, client.FieldOwner(pipeline.ManagerPlacement)); err != nil {
			return fmt.Errorf("failed to create resource snapshot %s: %w", snap.Name, err)
		}
		list.Items = append(list.Items, *snap)
		if sub == 0 {
			s.resourceSnapshot = snap
		}
	}
	r.changed(crp.Name)
	r.Recorder.Eventf(crp, s.resourceSnapshot, corev1.EventTypeNormal, "ResourceSnapshotCreated", "Snapshot",
		"Selected resources changed: created snapshot %s (index %d, %d objects in %d snapshots)", s.resourceSnapshot.Name, idx, len(contents), len(parts))
	return r.pruneResourceSnapshots(ctx, list.Items, historyLimit(crp))
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

func (r *Reconciler) demote(ctx context.Context, snap *placementv1beta1.ClusterResourceSnapshot) error {
	patch := client.MergeFrom(snap.DeepCopy())
	snap.Labels[placementv1beta1.LabelIsLatestSnapshot] = "false"
	if err := r.Client.Patch(ctx, snap, patch, client.FieldOwner(pipeline.ManagerPlacement)); err != nil {
		return fmt.Errorf("failed to demote resource snapshot %s: %w", snap.Name, err)
	}
	return nil
}

// pruneResourceSnapshots deletes every snapshot of the oldest indexes beyond
// limit, never of the latest set.
func (r *Reconciler) pruneResourceSnapshots(ctx context.Context, snaps []placementv1beta1.ClusterResourceSnapshot, limit int) error {
	byIndex := map[int][]*placementv1beta1.ClusterResourceSnapshot{}
	var indexes []int
	for i := range snaps {
		idx := snapshotIndex(&snaps[i], placementv1beta1.LabelResourceIndex)
		if _, ok := byIndex[idx]; !ok {
			indexes = append(indexes, idx)
		}
		byIndex[idx] = append(byIndex[idx], &snaps[i])
	}
	if len(indexes) <= limit {
		return nil
	}
	sort.Ints(indexes)
	for _, idx := range indexes[:len(indexes)-limit] {
		for _, snap := range byIndex[idx] {
			if snap.Labels[placementv1beta1.LabelIsLatestSnapshot] == "true" {
				continue
			}
			if err := client.IgnoreNotFound(r.Client.Delete(ctx, snap)); err != nil {
				return fmt.Errorf("failed to delete old snapshot %s: %w", snap.Name, err)
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
