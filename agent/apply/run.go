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
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/flotilla-io/flotilla/agent/availability"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// result is what happened to one manifest.
type result struct {
	// applied, reason and message make the manifest's Applied condition.
	applied metav1.ConditionStatus
	reason  string
	message string
	// diff lists how the member differs from the manifest, for a refused take-over
	// or ReportDiff.
	diff *placementv1beta1.DiffDetails
	// live is the object on the member as last seen, for the availability of an
	// applied manifest; nil if it does not exist.
	live *unstructured.Unstructured
	// drift describes how the object drifted, for FoundDrifts.
	drift *placementv1beta1.DriftDetails
	// corrections are the drifts of the object the Applier reverted; nil if none.
	corrections *placementv1beta1.DriftCorrections
	// blockerVersion is the resourceVersion of the object not taken over, as the apply saw
	// it: its watch takes any other version for a change.
	blockerVersion string
	// created is true for an applied object the Work created (see
	// ObjectRef.Created), false for one it took over.
	created bool
}

const appliedMessage = "applied"

func appliedResult(live *unstructured.Unstructured) result {
	return result{applied: metav1.ConditionTrue, reason: placementv1beta1.ReasonApplied, message: appliedMessage, live: live}
}

func failed(message string) result {
	return result{applied: metav1.ConditionFalse, reason: placementv1beta1.ReasonApplyFailed, message: message}
}

// notTakenOver is the result of a manifest whose object on the member, live, is not
// taken over.
func notTakenOver(live *unstructured.Unstructured, message string, diff *placementv1beta1.DiffDetails) result {
	return result{applied: metav1.ConditionFalse, reason: placementv1beta1.ReasonNotTakenOver, message: message, diff: diff, blockerVersion: live.GetResourceVersion()}
}

// reported is the result of a manifest compared under ReportDiff; applied then
// stands for its DiffReported condition.
func reported(message string, diff *placementv1beta1.DiffDetails) result {
	return result{applied: metav1.ConditionTrue, reason: placementv1beta1.ReasonDiffReported, message: message, diff: diff}
}

func pending(message string) result {
	return result{applied: metav1.ConditionUnknown, reason: placementv1beta1.ReasonApplyPending, message: message}
}

func allApplied(results []result) bool {
	for _, r := range results {
		if r.applied != metav1.ConditionTrue {
			return false
		}
	}
	return true
}

// applyAll applies the manifests in apply order and returns their results by
// ordinal.
func (a *Applier) applyAll(ctx context.Context, s *scope) []result {
	results := make([]result, len(s.manifests))
	// crds maps the kinds that CRDs applied by this Work define to their manifests.
	crds := map[schema.GroupKind]*manifest{}
	// waited holds the kinds of those CRDs already waited for, with the wait's error.
	waited := map[schema.GroupKind]error{}
	for _, m := range applyOrder(s.manifests) {
		if err := ctx.Err(); err != nil {
			results[m.ordinal] = failed(fmt.Sprintf("not applied: %v", err))
			continue
		}
		if m.err != nil {
			results[m.ordinal] = failed(m.err.Error())
			continue
		}
		gk := m.gvk.GroupKind()
		if crd, ok := crds[gk]; ok {
			if _, done := waited[gk]; !done {
				waited[gk] = a.waitServed(ctx, crd.obj.GetName(), m.gvk)
				// The CRD has changed since it was applied; show it as it is now.
				if live, err := a.get(ctx, crd); err == nil && live != nil {
					results[crd.ordinal].live = live
				}
			}
		}
		if err := a.resolve(ctx, s, m); err != nil {
			msg := err.Error()
			if werr := waited[gk]; werr != nil {
				msg = fmt.Sprintf("%s (the CustomResourceDefinition %s of this Work was not served within %s: %v)", msg, crds[gk].obj.GetName(), a.opts.EstablishTimeout, werr)
			}
			results[m.ordinal] = failed(msg)
			continue
		}
		if why := a.denied(m); why != "" {
			results[m.ordinal] = failed(why)
			continue
		}
		var r result
		if createOnly(m) {
			r = a.ensureExists(ctx, m)
		} else {
			r = a.applyManifest(ctx, s, m)
		}
		if r.applied == metav1.ConditionTrue && m.gvk.GroupKind() == namespaceGK {
			if err := a.grant(ctx, m.obj.GetName()); err != nil {
				r = failed(err.Error())
			}
		}
		results[m.ordinal] = r
		if r.applied == metav1.ConditionTrue {
			if served, ok := m.crdServes(); ok {
				crds[served] = m
			}
		}
	}
	return results
}

// applyManifest applies one resolved manifest with server-side apply, within the
// apply strategy's take-over and co-ownership rules.
func (a *Applier) applyManifest(ctx context.Context, s *scope, m *manifest) result {
	log := ctrllog.FromContext(ctx).WithValues("manifest", m.ordinal, "kind", m.gvk.Kind, "object", klog.KRef(m.obj.GetNamespace(), m.obj.GetName()))
	live, err := a.get(ctx, m)
	if err != nil {
		return failed(apiMessage(err))
	}
	if live != nil {
		if owners := live.GetOwnerReferences(); len(owners) > 0 && !s.strategy.AllowCoOwnership {
			return failed(fmt.Sprintf("%s is owned by %s on the member cluster; set applyStrategy.allowCoOwnership to apply it anyway",
				m.describe(), describeOwners(owners)))
		}
		if owner := live.GetAnnotations()[AnnotationWork]; owner != s.work.Name {
			if r, refused := a.checkTakeOver(ctx, s, m, live, owner); refused {
				log.V(1).Info("Did not take over an existing object", "whenToTakeOver", s.strategy.WhenToTakeOver)
				return r
			}
			log.Info("Taking over an existing object", "previousWork", owner, "whenToTakeOver", s.strategy.WhenToTakeOver)
		}
	}
	ours := live != nil && live.GetAnnotations()[AnnotationWork] == s.work.Name
	out, err := a.write(ctx, s, m, live, ours)
	if apierrors.IsConflict(err) && !forceConflicts(s.strategy, ours) {
		return failed(conflictMessage(m, err))
	}
	if err != nil {
		log.V(1).Info("Failed to apply a manifest", "error", err.Error())
		return failed(apiMessage(err))
	}
	log.V(2).Info("Applied a manifest", "resourceVersion", out.GetResourceVersion())
	r := appliedResult(out)
	r.created = live == nil || (ours && s.recorded(m).createdBy(live))
	return r
}

// recorded returns what the Work's record (before this apply) holds of the object of
// a manifest; the zero ObjectRef if nothing.
func (s *scope) recorded(m *manifest) ObjectRef {
	k, ok := m.key()
	if !ok || s.record == nil {
		return ObjectRef{}
	}
	for _, r := range s.record.Applied {
		if r.key() == k {
			return r
		}
	}
	return ObjectRef{}
}

// checkTakeOver decides whether an object that exists on the member but is not the
// Work's may be taken over; refused is true, with the result to report, if not.
// previousWork is the Work whose annotation the object carries, if any.
func (a *Applier) checkTakeOver(ctx context.Context, s *scope, m *manifest, live *unstructured.Unstructured, previousWork string) (r result, refused bool) {
	origin := "was not created by Flotilla"
	if previousWork != "" {
		origin = fmt.Sprintf("was applied by Work %q", previousWork)
	}
	if a.opts.OnHub && previousWork == "" {
		return notTakenOver(live, fmt.Sprintf("%s already exists on the hub and %s; the agent of the hub joined as a member never takes over an object no Work applied: on the hub it may be the source a placement selects",
			m.describe(), origin), nil), true
	}
	switch s.strategy.WhenToTakeOver {
	case placementv1beta1.WhenToTakeOverNever:
		return notTakenOver(live, fmt.Sprintf("%s already exists on the member cluster and %s; applyStrategy.whenToTakeOver is Never",
			m.describe(), origin), nil), true
	case placementv1beta1.WhenToTakeOverIfNoDiff:
		diffs, total, err := a.diff(ctx, m, live, s.work.Name, s.strategy.ComparisonOption)
		if err != nil {
			return failed(fmt.Sprintf("failed to compare %s with the object on the member cluster: %s", m.describe(), apiMessage(err))), true
		}
		if total == 0 {
			return result{}, false
		}
		return notTakenOver(live, fmt.Sprintf("%s already exists on the member cluster, %s and differs from the hub in %s (first: %s); applyStrategy.whenToTakeOver is IfNoDiff",
			m.describe(), origin, plural(total, "field"), diffs[0].Path), diffDetails(live, diffs)), true
	default:
		return result{}, false
	}
}

// diff returns how the object on the member differs from the manifest (at most
// maxDiffs entries) and how many differences there are in all.
func (a *Applier) diff(ctx context.Context, m *manifest, live *unstructured.Unstructured, workName string, option placementv1beta1.ComparisonOption) ([]placementv1beta1.PatchDetail, int, error) {
	dry, err := a.dryRun(ctx, m, workName)
	if err != nil {
		return nil, 0, err
	}
	lists := [][]placementv1beta1.PatchDetail{changedPaths(live, dry)}
	if option == placementv1beta1.FullComparison {
		lists = append(lists, extraPaths(m.obj, live))
	}
	diffs, total := mergeDiffs(lists...)
	return diffs, total, nil
}

// dryRun returns what the object of a manifest would become if it were applied now,
// taking every field the manifest sets.
func (a *Applier) dryRun(ctx context.Context, m *manifest, workName string) (*unstructured.Unstructured, error) {
	return a.resourceOf(m).Apply(ctx, m.obj.GetName(), a.body(m, workName), metav1.ApplyOptions{
		FieldManager: a.opts.FieldManager,
		Force:        true,
		DryRun:       []string{metav1.DryRunAll},
	})
}

func diffDetails(live *unstructured.Unstructured, diffs []placementv1beta1.PatchDetail) *placementv1beta1.DiffDetails {
	now := metav1.Now()
	d := &placementv1beta1.DiffDetails{ObservationTime: &now, ObservedDiffs: diffs}
	if live != nil {
		gen := live.GetGeneration()
		d.ObservedInMemberClusterGeneration = &gen
	}
	return d
}

// reportDiffs compares every manifest with the member without changing anything, for
// the ReportDiff apply strategy.
func (a *Applier) reportDiffs(ctx context.Context, s *scope) []result {
	results := make([]result, len(s.manifests))
	for i, m := range s.manifests {
		if m.err != nil {
			results[i] = failed(m.err.Error())
			continue
		}
		if err := a.resolve(ctx, s, m); err != nil {
			results[i] = failed(err.Error())
			continue
		}
		if why := a.denied(m); why != "" {
			results[i] = failed(why)
			continue
		}
		live, err := a.get(ctx, m)
		if err != nil {
			results[i] = failed(apiMessage(err))
			continue
		}
		if live == nil {
			results[i] = reported(fmt.Sprintf("%s does not exist on the member cluster", m.describe()),
				diffDetails(nil, []placementv1beta1.PatchDetail{{Path: "/", ValueInHub: formatValue(m.obj.Object)}}))
			continue
		}
		diffs, total, err := a.diff(ctx, m, live, s.work.Name, s.strategy.ComparisonOption)
		if err != nil {
			results[i] = failed(fmt.Sprintf("failed to compare %s with the object on the member cluster: %s", m.describe(), apiMessage(err)))
			continue
		}
		if total == 0 {
			results[i] = reported(fmt.Sprintf("%s on the member cluster matches the hub", m.describe()), nil)
			continue
		}
		results[i] = reported(fmt.Sprintf("%s on the member cluster differs from the hub in %s (first: %s)", m.describe(), plural(total, "field"), diffs[0].Path),
			diffDetails(live, diffs))
	}
	return results
}

// unchanged checks that every object of a Work whose spec was completely applied
// before is still there and still the Work's, and returns them as applied. ok is
// false if the Work must be applied again.
func (a *Applier) unchanged(ctx context.Context, s *scope) (results []result, ok bool) {
	log := ctrllog.FromContext(ctx)
	results = make([]result, len(s.manifests))
	for i, m := range s.manifests {
		if m.err != nil {
			return nil, false
		}
		if err := a.resolve(ctx, s, m); err != nil {
			return nil, false
		}
		live, err := a.cachedGet(ctx, m)
		if err == nil && live != nil && createOnly(m) {
			// Never the Work's: it only has to exist.
			results[i] = appliedResult(live)
			continue
		}
		if err != nil || live == nil || live.GetAnnotations()[AnnotationWork] != s.work.Name || live.GetLabels()[LabelAppliedBy] != AppliedByAgent {
			log.V(1).Info("An object of an unchanged Work is missing or no longer the Work's; applying again", "object", m.describe())
			return nil, false
		}
		if !sameProvenance(m.obj, live) {
			// Comparisons leave provenance out; applying again puts it right.
			log.V(1).Info("An object of an unchanged Work names another placement or snapshot; applying again", "object", m.describe())
			return nil, false
		}
		results[i] = appliedResult(live)
	}
	return results, true
}

// resultsFromRecord returns the Applied results the record of a Work implies, for a
// Status call before any Apply since the agent started.
func resultsFromRecord(s *scope, rec *Record) []result {
	results := make([]result, len(s.manifests))
	if rec == nil || rec.Hash != s.hash || s.strategy.Type == placementv1beta1.ApplyStrategyTypeReportDiff {
		for i := range results {
			results[i] = pending("the latest spec of the Work has not been applied yet")
		}
		return results
	}
	applied := map[objectKey]bool{}
	for _, r := range rec.Applied {
		applied[r.key()] = true
	}
	for i, m := range s.manifests {
		if k, ok := m.key(); ok && applied[k] {
			results[i] = appliedResult(nil)
		} else {
			results[i] = pending("the manifest has not been applied since the agent started")
		}
	}
	return results
}

// appliedRefs returns the objects the Work holds after an apply: those applied now,
// in apply order, then those applied before that the Work still lists but that
// failed this time.
func appliedRefs(s *scope) []ObjectRef {
	var out []ObjectRef
	seen := map[objectKey]bool{}
	for _, m := range applyOrder(s.manifests) {
		if res := s.results[m.ordinal]; res.applied == metav1.ConditionTrue && m.mapping != nil {
			r := m.ref()
			r.Created = res.created
			if res.live != nil {
				r.UID = res.live.GetUID()
			}
			out = append(out, r)
			seen[r.key()] = true
		}
	}
	if s.record != nil {
		listed := listedKeys(s.manifests)
		for _, r := range s.record.Applied {
			if listed[r.key()] && !seen[r.key()] {
				out = append(out, r)
				seen[r.key()] = true
			}
		}
	}
	return out
}

// listedKeys returns the keys of the objects the manifests describe. The namespace of
// a manifest whose kind could not be resolved is uncertain (it is dropped for
// cluster-scoped kinds), so such a manifest counts both with and without it.
func listedKeys(manifests []*manifest) map[objectKey]bool {
	keys := map[objectKey]bool{}
	for _, m := range manifests {
		k, ok := m.key()
		if !ok {
			continue
		}
		keys[k] = true
		if m.mapping == nil {
			k.namespace = ""
			keys[k] = true
		}
	}
	return keys
}

// resolve finds the resource of a decoded manifest and fixes the manifest's namespace
// for the resource's scope. When the kind is unknown, discovery is refreshed, at most
// once per scope (kinds added since, such as by a CRD, are found then).
func (a *Applier) resolve(ctx context.Context, s *scope, m *manifest) error {
	err := a.lookup(ctx, m, !s.rediscovered)
	if isNoMatch(err) {
		s.rediscovered = true
	}
	return err
}

// lookup finds the resource of a decoded manifest from discovery, refreshing discovery
// first if refresh is set and the kind is unknown.
func (a *Applier) lookup(ctx context.Context, m *manifest, refresh bool) error {
	if m.mapping != nil {
		return nil
	}
	mapping, err := a.mapper.RESTMappingWithContext(ctx, m.gvk.GroupKind(), m.gvk.Version)
	if isNoMatch(err) && refresh {
		a.mapper.ResetWithContext(ctx)
		mapping, err = a.mapper.RESTMappingWithContext(ctx, m.gvk.GroupKind(), m.gvk.Version)
	}
	if err != nil {
		return err
	}
	if err := m.setScope(mapping); err != nil {
		return err
	}
	m.mapping = mapping
	return nil
}

// waitServed waits, at most EstablishTimeout, until the CRD named crd is established
// and its kind gvk is served.
func (a *Applier) waitServed(ctx context.Context, crd string, gvk schema.GroupVersionKind) error {
	log := ctrllog.FromContext(ctx)
	start := time.Now()
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, a.opts.EstablishTimeout, true, func(ctx context.Context) (bool, error) {
		obj, err := a.dynamic.Resource(crdGVR).Get(ctx, crd, metav1.GetOptions{})
		if err != nil || !availability.Check(obj).IsAvailable() {
			return false, nil
		}
		if _, err := a.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version); err == nil {
			return true, nil
		}
		a.mapper.ResetWithContext(ctx)
		_, err = a.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
		return err == nil, nil
	})
	if err != nil {
		log.Info("A CustomResourceDefinition of the Work was not served in time", "crd", crd, "kind", gvk.String(), "error", err.Error())
		return err
	}
	log.V(1).Info("Waited for a CustomResourceDefinition of the Work", "crd", crd, "duration", time.Since(start).String())
	return nil
}

// sameProvenance reports whether the object on the member (live) carries the
// provenance annotations the manifest (want) sets.
func sameProvenance(want, live *unstructured.Unstructured) bool {
	have := live.GetAnnotations()
	for k, v := range want.GetAnnotations() {
		if slices.Contains(placementv1beta1.ProvenanceAnnotations, k) && have[k] != v {
			return false
		}
	}
	return true
}

// body returns the object to send for a manifest: the manifest with the Work's
// annotation.
func (a *Applier) body(m *manifest, workName string) *unstructured.Unstructured {
	b := m.obj.DeepCopy()
	ann := b.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationWork] = workName
	b.SetAnnotations(ann)
	lbl := b.GetLabels()
	if lbl == nil {
		lbl = map[string]string{}
	}
	lbl[LabelAppliedBy] = AppliedByAgent
	b.SetLabels(lbl)
	return b
}

// forceConflicts reports whether server-side apply takes fields over from other field
// managers on an object, ours when it is already the Work's: always when the
// strategy takes objects over Always; otherwise as serverSideApplyConfig.force
// says, and when it is unset on the Work's own objects only (a member-side edit in
// between, a drift, does not make applying the hub's spec a conflict).
func forceConflicts(s placementv1beta1.ApplyStrategy, ours bool) bool {
	if s.WhenToTakeOver == placementv1beta1.WhenToTakeOverAlways {
		return true
	}
	if c := s.ServerSideApplyConfig; c != nil && c.Force != nil {
		return *c.Force
	}
	return ours
}

// conflictMessage is the status message of a manifest whose apply met fields that
// other field managers own while serverSideApplyConfig.force is false.
func conflictMessage(m *manifest, err error) string {
	return fmt.Sprintf("%s: %s; applyStrategy.serverSideApplyConfig.force is false, so fields another field manager owns are left to it: remove them from the manifest, or set force to true to take them",
		m.describe(), apiMessage(err))
}

// apiMessage returns the message of an error as the API server wrote it.
func apiMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		return status.Status().Message
	}
	return err.Error()
}

func describeOwners(owners []metav1.OwnerReference) string {
	names := make([]string, 0, len(owners))
	for _, o := range owners {
		names = append(names, o.Kind+"/"+o.Name)
	}
	return strings.Join(names, ", ")
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func isNoMatch(err error) bool {
	return err != nil && meta.IsNoMatchError(err)
}

func isNotFound(err error) bool {
	return err != nil && apierrors.IsNotFound(err)
}
