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
	"encoding/json"
	"fmt"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Drift is a change made on the member cluster to an applied object, in a field the
// hub manages: a field that applying the manifest again would change (found with a
// server-side dry run, so that the member's defaulting does not count). With
// comparisonOption FullComparison, labels and annotations that someone added on the
// member count too (the rest of the object is the member's to default and its
// controllers' to fill in, so it cannot be told from a drift).

// driftMemo is what the Applier remembers of the drifts of one object.
type driftMemo struct {
	// firstDrifted is when the object was first seen drifted in its current drift;
	// nil while it matches the hub.
	firstDrifted *metav1.Time
	// corrections are the drifts reverted so far.
	corrections placementv1beta1.DriftCorrections
}

// checkDrifts looks for drifts in the objects of the applied manifests of s and
// reverts them (whenToApply Always) or turns their results into FoundDrifts
// (IfNotDrifted). Objects that cannot be compared keep their results.
func (a *Applier) checkDrifts(ctx context.Context, s *scope) {
	if s.strategy.Type == placementv1beta1.ApplyStrategyTypeReportDiff {
		return
	}
	log := ctrllog.FromContext(ctx)
	for i, m := range s.manifests {
		r := &s.results[i]
		k, ok := m.key()
		if !ok || r.applied != metav1.ConditionTrue || r.live == nil || m.mapping == nil || createOnly(m) {
			// A create-only object is never the Work's: it cannot drift.
			continue
		}
		diffs, total, err := a.drifts(ctx, s, m, r.live)
		if err == nil && total > 0 {
			// The cached object may be older than our last write: look again.
			var live *unstructured.Unstructured
			if live, err = a.get(ctx, m); err == nil && live != nil {
				r.live = live
				diffs, total, err = a.drifts(ctx, s, m, live)
			}
		}
		if err != nil {
			log.V(1).Info("Failed to look for drifts", "object", m.describe(), "error", err.Error())
			continue
		}
		memo := a.driftMemo(s.work.Name, k)
		if total == 0 {
			a.mu.Lock()
			memo.firstDrifted = nil
			r.corrections = copyCorrections(memo.corrections)
			a.mu.Unlock()
			continue
		}
		now := metav1.Now()
		if s.strategy.WhenToApply == placementv1beta1.WhenToApplyIfNotDrifted {
			a.mu.Lock()
			if memo.firstDrifted == nil {
				memo.firstDrifted = &now
			}
			first := *memo.firstDrifted
			a.mu.Unlock()
			gen := r.live.GetGeneration()
			*r = result{
				applied: metav1.ConditionFalse,
				reason:  placementv1beta1.ReasonFoundDrifts,
				message: fmt.Sprintf("%s was changed on the member cluster in %s (first: %s) and applyStrategy.whenToApply is IfNotDrifted, so it is left so",
					m.describe(), plural(total, "field"), diffs[0].Path),
				drift: &placementv1beta1.DriftDetails{ObservationTime: &now, FirstDriftedObservedTime: &first,
					ObservedInMemberClusterGeneration: &gen, ObservedDrifts: diffs},
				live: r.live,
			}
			driftsTotal.WithLabelValues(driftReported).Inc()
			continue
		}
		out, err := a.correct(ctx, s, m, r.live, diffs)
		if apierrors.IsConflict(err) && !forceConflicts(s.strategy, true) {
			*r = failed(conflictMessage(m, err))
			continue
		}
		if err != nil {
			*r = failed(fmt.Sprintf("%s was changed on the member cluster (first: %s) and could not be reverted: %s", m.describe(), diffs[0].Path, apiMessage(err)))
			continue
		}
		a.mu.Lock()
		memo.firstDrifted = nil
		memo.corrections.Count++
		memo.corrections.LastCorrectionTime = &now
		memo.corrections.LastDriftedPaths = driftedPaths(diffs)
		r.corrections = copyCorrections(memo.corrections)
		a.mu.Unlock()
		r.live = out
		driftsTotal.WithLabelValues(driftCorrected).Inc()
		log.Info("Reverted a drift", "object", m.describe(), "fields", total, "first", diffs[0].Path, "corrections", r.corrections.Count)
	}
}

// drifts returns how the object on the member drifted from the manifest (at most
// maxDiffs entries) and how many drifts there are in all.
func (a *Applier) drifts(ctx context.Context, s *scope, m *manifest, live *unstructured.Unstructured) ([]placementv1beta1.PatchDetail, int, error) {
	dry, err := a.dryRun(ctx, m, s.work.Name)
	if err != nil {
		return nil, 0, err
	}
	lists := [][]placementv1beta1.PatchDetail{changedPaths(live, dry)}
	if s.strategy.ComparisonOption == placementv1beta1.FullComparison {
		lists = append(lists, extraMetadata(a.body(m, s.work.Name), live))
	}
	diffs, total := mergeDiffs(lists...)
	return diffs, total, nil
}

// correct applies the manifest again over a drifted object, taking back the fields
// others took, and, with FullComparison, removes the labels and annotations added on
// the member. It returns the object as it is afterwards.
func (a *Applier) correct(ctx context.Context, s *scope, m *manifest, live *unstructured.Unstructured, diffs []placementv1beta1.PatchDetail) (*unstructured.Unstructured, error) {
	out, err := a.write(ctx, s, m, live, true)
	if err != nil {
		return nil, err
	}
	if s.strategy.ComparisonOption != placementv1beta1.FullComparison {
		return out, nil
	}
	remove := map[string]map[string]any{}
	for _, d := range extraMetadata(a.body(m, s.work.Name), out) {
		parts := strings.SplitN(strings.TrimPrefix(d.Path, "/metadata/"), "/", 2)
		if len(parts) != 2 {
			continue
		}
		if remove[parts[0]] == nil {
			remove[parts[0]] = map[string]any{}
		}
		remove[parts[0]][unescapePointer(parts[1])] = nil
	}
	if len(remove) == 0 {
		return out, nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": remove})
	if err != nil {
		return nil, err
	}
	return a.resourceOf(m).Patch(ctx, m.obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: a.opts.FieldManager})
}

// serverSetPrefixes are annotation (and label) key prefixes that the member's API
// server and controllers set; FullComparison does not count them as drifts.
var serverSetPrefixes = []string{"kubectl.kubernetes.io/", "deployment.kubernetes.io/", "control-plane.alpha.kubernetes.io/",
	"pv.kubernetes.io/", "volume.kubernetes.io/", "volume.beta.kubernetes.io/", "kubernetes.io/metadata.name"}

// extraMetadata returns the labels and annotations set on the member (live) that the
// object the Applier sends (body) does not set.
func extraMetadata(body, live *unstructured.Unstructured) []placementv1beta1.PatchDetail {
	var out []placementv1beta1.PatchDetail
	for _, field := range []string{"labels", "annotations"} {
		want, _, _ := unstructured.NestedStringMap(body.Object, "metadata", field)
		have, _, _ := unstructured.NestedStringMap(live.Object, "metadata", field)
		keys := make([]string, 0, len(have))
		for k := range have {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if _, ok := want[k]; ok || serverSet(k) || k == AnnotationLastApplied {
				continue
			}
			out = append(out, placementv1beta1.PatchDetail{Path: jsonPointer([]string{"metadata", field, k}), ValueInMember: truncate(have[k], maxDiffValue)})
		}
	}
	return out
}

func serverSet(key string) bool {
	for _, p := range serverSetPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

func unescapePointer(s string) string {
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(s)
}

// driftMemo returns the memo of an object of a Work, creating it.
func (a *Applier) driftMemo(work string, k objectKey) *driftMemo {
	a.mu.Lock()
	defer a.mu.Unlock()
	byObject := a.driftMemos[work]
	if byObject == nil {
		byObject = map[objectKey]*driftMemo{}
		a.driftMemos[work] = byObject
	}
	memo := byObject[k]
	if memo == nil {
		memo = &driftMemo{}
		byObject[k] = memo
	}
	return memo
}

func copyCorrections(c placementv1beta1.DriftCorrections) *placementv1beta1.DriftCorrections {
	if c.Count == 0 {
		return nil
	}
	return c.DeepCopy()
}

func driftedPaths(diffs []placementv1beta1.PatchDetail) []string {
	out := make([]string, 0, min(len(diffs), maxCorrectedPaths))
	for _, d := range diffs {
		if len(out) == maxCorrectedPaths {
			break
		}
		out = append(out, d.Path)
	}
	return out
}
