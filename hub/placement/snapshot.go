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
				if err := r.Client.Patch(ctx, snap, patch); err != nil {
					return fmt.Errorf("failed to update policy snapshot %s: %w", snap.Name, err)
				}
			}
			continue
		}
		patch := client.MergeFrom(snap.DeepCopy())
		snap.Labels[placementv1beta1.LabelIsLatestSnapshot] = "false"
		if err := r.Client.Patch(ctx, snap, patch); err != nil {
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
	if err := r.Client.Create(ctx, snap); err != nil {
		return fmt.Errorf("failed to create policy snapshot %s: %w", snap.Name, err)
	}
	s.policySnapshot = snap
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

// ensureResourceSnapshot makes the latest ClusterResourceSnapshot hold exactly
// the selected resources, creating a new one when they changed.
func (r *Reconciler) ensureResourceSnapshot(ctx context.Context, s *scope) error {
	crp := s.placement
	contents := make([]placementv1beta1.ResourceContent, 0, len(s.selected))
	for _, u := range s.selected {
		data, err := json.Marshal(resources.Sanitize(u).Object)
		if err != nil {
			return fmt.Errorf("failed to encode %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		contents = append(contents, placementv1beta1.ResourceContent{RawExtension: runtime.RawExtension{Raw: data}})
	}
	hash, err := hashOf(contents)
	if err != nil {
		return fmt.Errorf("failed to hash the selected resources: %w", err)
	}
	size := 0
	for _, c := range contents {
		size += len(c.Raw)
	}
	if size > maxSnapshotBytes {
		return fmt.Errorf("the selected resources take %d bytes, more than one snapshot holds (%d): select fewer or smaller objects", size, maxSnapshotBytes)
	}
	list := &placementv1beta1.ClusterResourceSnapshotList{}
	if err := r.Client.List(ctx, list, client.MatchingLabels{placementv1beta1.LabelPlacementName: crp.Name}); err != nil {
		return fmt.Errorf("failed to list resource snapshots: %w", err)
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
		if snap.Annotations[placementv1beta1.AnnotationResourceHash] == hash {
			s.resourceSnapshot = snap
			continue
		}
		patch := client.MergeFrom(snap.DeepCopy())
		snap.Labels[placementv1beta1.LabelIsLatestSnapshot] = "false"
		if err := r.Client.Patch(ctx, snap, patch); err != nil {
			return fmt.Errorf("failed to demote resource snapshot %s: %w", snap.Name, err)
		}
	}
	objs := make([]client.Object, 0, len(list.Items)+1)
	for i := range list.Items {
		objs = append(objs, &list.Items[i])
	}
	if s.resourceSnapshot == nil {
		idx := latestIndex + 1
		snap := &placementv1beta1.ClusterResourceSnapshot{
			ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("%s-%d-snapshot", crp.Name, idx),
				Labels: map[string]string{
					placementv1beta1.LabelPlacementName:    crp.Name,
					placementv1beta1.LabelIsLatestSnapshot: "true",
					placementv1beta1.LabelResourceIndex:    strconv.Itoa(idx),
				},
				Annotations: map[string]string{
					placementv1beta1.AnnotationResourceHash:              hash,
					placementv1beta1.AnnotationNumberOfResourceSnapshots: "1",
				},
			},
			Spec: placementv1beta1.ResourceSnapshotSpec{SelectedResources: contents},
		}
		if err := controllerutil.SetControllerReference(crp, snap, r.Scheme); err != nil {
			return err
		}
		if err := r.Client.Create(ctx, snap); err != nil {
			return fmt.Errorf("failed to create resource snapshot %s: %w", snap.Name, err)
		}
		s.resourceSnapshot = snap
		objs = append(objs, snap)
		r.Recorder.Eventf(crp, snap, corev1.EventTypeNormal, "ResourceSnapshotCreated", "Snapshot", "Selected resources changed: created snapshot %s (index %d, %d objects)", snap.Name, idx, len(contents))
	}
	return r.prune(ctx, objs, placementv1beta1.LabelResourceIndex, historyLimit(crp))
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
