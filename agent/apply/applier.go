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
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/flotilla-io/flotilla/agent/availability"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Applier applies Works on one member cluster. It is safe for concurrent use; calls
// for the same Work are serialised.
type Applier struct {
	opts    Options
	dynamic dynamic.Interface
	// mapper maps kinds to resources from the member's discovery; it is reset when a
	// kind is not found, so that kinds added since (CRDs) are found.
	mapper *restmapper.DeferredDiscoveryRESTMapper
	// discovery is the member's discovery, not cached, and metadata reads objects'
	// metadata only: for checking what a Namespace holds (namespaceInUse).
	discovery discovery.DiscoveryInterface
	metadata  metadata.Interface

	locks keyedLocks

	// watch keeps informers on the objects the Applier applied; nil unless
	// Options.OnChange is set.
	watch *watcher

	mu sync.Mutex
	// last holds, per Work name, what the last Apply found; Status starts from it.
	last map[string]lastApply
	// driftMemos holds, per Work name and object, what is known of its drifts.
	driftMemos map[string]map[objectKey]*driftMemo
}

// lastApply is what an Apply found for a Work.
type lastApply struct {
	// hash is the SpecHash of the spec applied.
	hash string
	// results are the manifests' Applied results, by ordinal, without objects.
	results []result
	// status is the status returned, the previous conditions of the next call.
	status placementv1beta1.WorkStatus
}

// New returns an Applier for the member cluster that cfg connects to.
func New(cfg *rest.Config, opts Options) (*Applier, error) {
	opts.setDefaults()
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create the HTTP client of the member cluster: %w", err)
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("failed to create the dynamic client of the member cluster: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("failed to create the discovery client of the member cluster: %w", err)
	}
	meta, err := metadata.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("failed to create the metadata client of the member cluster: %w", err)
	}
	a := &Applier{
		opts:       opts,
		dynamic:    dyn,
		discovery:  disc,
		metadata:   meta,
		mapper:     restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)),
		last:       map[string]lastApply{},
		driftMemos: map[string]map[objectKey]*driftMemo{},
	}
	if opts.OnChange != nil {
		a.watch = newWatcher(dyn, opts.OnChange, opts.LeastPrivilege != nil)
	}
	return a, nil
}

// Close stops the Applier's watches. The Applier must not be used afterwards.
func (a *Applier) Close() {
	if a.watch != nil {
		a.watch.close()
	}
}

// newScope decodes a Work for an Apply or a Status.
func newScope(work *placementv1beta1.Work) *scope {
	return &scope{
		work:      work,
		hash:      SpecHash(work),
		strategy:  applyStrategyOf(work),
		manifests: decodeManifests(work),
		rules:     availability.CompileRules(work.Spec.AvailabilityRules),
		feedback:  parseFeedback(work.Spec.StatusFeedback),
	}
}

// Apply makes the member cluster match the Work. It applies every manifest (unless the
// apply strategy is ReportDiff, when it only reports differences), deletes (or, with
// delete strategy Abandon, lets go of) the objects an earlier spec of the Work applied
// that it no longer lists, records what it applied, and returns the Work's status:
// the Applied and Available conditions of the Work and of each manifest, observed at
// work.Generation.
//
// Objects are applied with server-side apply, or, with type ClientSideApply, with a
// three-way merge against the configuration last applied (clientSideApply). Fields
// other managers own are taken over (forced) when the object is already the Work's,
// when whenToTakeOver is Always or when serverSideApplyConfig.force is set. Every
// applied object carries LabelAppliedBy and AnnotationWork. Manifests the guards
// refuse (the agent's own namespace and RBAC, a hub's own machinery, Options.DeniedKinds and
// Options.DeniedNamespaces) fail. An object that exists but is not the
// Work's (it lacks AnnotationWork with the Work's name) is taken over as
// whenToTakeOver says: Always; IfNoDiff, only if applying would change nothing and,
// with comparisonOption FullComparison, the member sets no field the manifest leaves
// out; Never. An object with owner references is applied only with allowCoOwnership.
//
// A Work whose spec has not changed since an apply that applied everything is not
// applied again, as long as its objects are still there and still the Work's; only
// their drift and availability are re-evaluated (see Status).
//
// Manifests that cannot be applied are reported in the status, not as an error. The
// error is for what stops the Applier from doing its job (reading or writing the
// record, cleaning up objects the Work no longer lists); the status returned with it
// is still the best known.
func (a *Applier) Apply(ctx context.Context, work *placementv1beta1.Work) (placementv1beta1.WorkStatus, error) {
	unlock := a.locks.lock(work.Name)
	defer unlock()
	log := ctrllog.FromContext(ctx).WithValues("work", work.Name, "generation", work.Generation)
	ctx = ctrllog.IntoContext(ctx, log)

	s := newScope(work)
	status, result, err := a.apply(ctx, s)
	applyTotal.WithLabelValues(result).Inc()
	if err != nil {
		log.Error(err, "Apply of the Work did not complete", "result", result)
	} else {
		log.V(1).Info("Applied the Work", "result", result, "hash", s.hash)
	}
	return status, err
}

// scope carries what one Apply learns about a Work.
type scope struct {
	// work is the Work being applied.
	work *placementv1beta1.Work
	// hash is SpecHash(work).
	hash string
	// strategy is the Work's apply strategy with defaults filled in.
	strategy placementv1beta1.ApplyStrategy
	// rules are the Work's availability rules, compiled.
	rules availability.Rules
	// feedback are the Work's statusFeedback rules, parsed.
	feedback feedbackRules
	// manifests are the Work's manifests, decoded, by ordinal; apply resolves their
	// mappings.
	manifests []*manifest
	// record is the Work's record before this apply; nil if there was none.
	record *Record
	// results are what happened to each manifest, by ordinal.
	results []result
	// rediscovered is set once discovery was refreshed for a kind it did not know
	// (resolve); it is refreshed at most once per scope, besides waiting for the
	// Work's CRDs.
	rediscovered bool
}

func (a *Applier) apply(ctx context.Context, s *scope) (placementv1beta1.WorkStatus, string, error) {
	rec, err := a.getRecord(ctx, s.work.Name)
	if err != nil {
		return a.pendingStatus(s, err.Error()), resultFailed, err
	}
	s.record = rec

	if s.strategy.Type == placementv1beta1.ApplyStrategyTypeReportDiff {
		s.results = a.reportDiffs(ctx, s)
		// Nothing changed on the member: the objects applied before stay the Work's.
		next := &Record{WorkName: s.work.Name, Hash: s.hash, DeletePolicy: deletePolicyOf(s.work), TakenOverPolicy: takenOverPolicyOf(s.work)}
		if rec != nil {
			next.Applied = rec.Applied
		}
		err := a.saveRecord(ctx, rec, next)
		return a.finish(s), resultReported, err
	}

	if rec != nil && rec.Hash == s.hash && rec.AllApplied {
		if results, ok := a.unchanged(ctx, s); ok {
			s.results = results
			a.checkDrifts(ctx, s)
			return a.finish(s), resultUnchanged, a.keepWork(ctx, rec, s.work)
		}
	}

	stored, err := a.guardRecord(ctx, s)
	if err != nil {
		return a.pendingStatus(s, err.Error()), resultFailed, err
	}
	s.results = a.applyAll(ctx, s)
	a.watchApplied(s)
	next := &Record{WorkName: s.work.Name, Hash: s.hash, DeletePolicy: deletePolicyOf(s.work), TakenOverPolicy: takenOverPolicyOf(s.work), AllApplied: allApplied(s.results),
		Work: recordedWork(s.work)}
	next.Applied = appliedRefs(s)
	// What it releases is logged and counted; the Work's status is about what it
	// lists.
	kept, _, removeErr := a.removeUnlisted(ctx, s)
	next.Applied = append(next.Applied, kept...)
	if removeErr != nil {
		next.AllApplied = false
	}
	recordErr := a.saveRecord(ctx, stored, next)
	status := a.finish(s)
	if err := errors.Join(removeErr, recordErr); err != nil {
		return status, resultFailed, err
	}
	if !next.AllApplied {
		return status, resultFailed, nil
	}
	return status, resultApplied, nil
}

// guardRecord adds to the Work's record, before anything is applied, the objects the
// Work lists that the record does not hold yet, so that an agent stopped in the middle
// of an apply still knows, when the Work is removed, what it may have created. It
// returns the record as stored.
func (a *Applier) guardRecord(ctx context.Context, s *scope) (*Record, error) {
	held := map[objectKey]bool{}
	if s.record != nil {
		for _, r := range s.record.Applied {
			held[r.key()] = true
		}
	}
	var added []ObjectRef
	// Objects created from now on, with the Work's annotation, are the Work's own.
	guardedAt := time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
	for _, m := range applyOrder(s.manifests) {
		if k, ok := m.key(); ok && !held[k] {
			held[k] = true
			// The resource is not known before the kind is resolved; removal does
			// not need it.
			added = append(added, ObjectRef{Group: k.group, Version: m.gvk.Version, Kind: k.kind, Namespace: k.namespace, Name: k.name, GuardedAt: guardedAt})
		}
	}
	if len(added) == 0 {
		return s.record, nil
	}
	guard := &Record{WorkName: s.work.Name, DeletePolicy: deletePolicyOf(s.work), TakenOverPolicy: takenOverPolicyOf(s.work)}
	if s.record != nil {
		guard.Hash, guard.Work = s.record.Hash, s.record.Work
		guard.Applied = append(guard.Applied, s.record.Applied...)
	}
	guard.Applied = append(guard.Applied, added...)
	if err := a.putRecord(ctx, guard); err != nil {
		return nil, err
	}
	return guard, nil
}

// keepWork adds work to its record when the record, applied in full with work's
// spec, does not keep it yet (a record written before records kept their Work):
// from then on a restarted agent resumes the Work without the hub sending it
// again (Record.Resumable).
func (a *Applier) keepWork(ctx context.Context, rec *Record, work *placementv1beta1.Work) error {
	if rec == nil || !rec.AllApplied || rec.Hash != SpecHash(work) || keptHash(rec) == rec.Hash {
		return nil
	}
	kept := recordedWork(work)
	if kept == nil {
		return nil
	}
	next := *rec
	next.Work = kept
	return a.putRecord(ctx, &next)
}

// saveRecord writes next unless it is what prev already holds.
func (a *Applier) saveRecord(ctx context.Context, prev, next *Record) error {
	if next.equal(prev) {
		return nil
	}
	return a.putRecord(ctx, next)
}

// finish builds the status of the Work from the results and remembers them for
// Status.
func (a *Applier) finish(s *scope) placementv1beta1.WorkStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	status := buildStatus(s, s.results, a.previousStatus(s.work))
	cached := make([]result, len(s.results))
	for i, r := range s.results {
		r.live = nil
		cached[i] = r
	}
	a.last[s.work.Name] = lastApply{hash: s.hash, results: cached, status: status}
	return status
}

// previousStatus returns the status whose conditions the next status starts from,
// so that transition times only move when a status changes: the Work's own, or else
// the one last returned. The caller holds a.mu.
func (a *Applier) previousStatus(work *placementv1beta1.Work) placementv1beta1.WorkStatus {
	if len(work.Status.Conditions) > 0 {
		return work.Status
	}
	return a.last[work.Name].status
}

// pendingStatus is the status of a Work that could not be applied at all.
func (a *Applier) pendingStatus(s *scope, message string) placementv1beta1.WorkStatus {
	results := make([]result, len(s.manifests))
	for i := range results {
		results[i] = pending(message)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return buildStatus(s, results, a.previousStatus(s.work))
}

// Status re-evaluates what the Work applied — availability, status feedback and
// drift — and returns the Work's status as Apply would. It applies nothing, except
// that drifted objects are applied again when whenToApply is Always (and a record
// that does not keep the Work yet gets it: keepWork). Objects are read
// from the watch's cache when there is one. Manifests of a spec that has not been
// applied are reported as ApplyPending. On error (the member could not be read) the
// status is empty.
func (a *Applier) Status(ctx context.Context, work *placementv1beta1.Work) (placementv1beta1.WorkStatus, error) {
	unlock := a.locks.lock(work.Name)
	defer unlock()
	ctx = ctrllog.IntoContext(ctx, ctrllog.FromContext(ctx).WithValues("work", work.Name, "generation", work.Generation))

	s := newScope(work)
	a.mu.Lock()
	last, ok := a.last[work.Name]
	a.mu.Unlock()
	if ok && last.hash == s.hash && len(last.results) == len(s.manifests) {
		s.results = append([]result(nil), last.results...)
	} else {
		rec, err := a.getRecord(ctx, work.Name)
		if err != nil {
			return placementv1beta1.WorkStatus{}, err
		}
		s.results = resultsFromRecord(s, rec)
		// Bookkeeping, not an apply: the record of an unchanged Work re-evaluated
		// after a restart keeps the Work from now on.
		if err := a.keepWork(ctx, rec, work); err != nil {
			return placementv1beta1.WorkStatus{}, err
		}
	}

	for i, m := range s.manifests {
		if m.obj == nil {
			continue
		}
		if s.results[i].applied != metav1.ConditionTrue {
			// Only for the identifier: do not refresh discovery (at every poll) for
			// kinds that may have failed to apply because they are unknown.
			_ = a.lookup(ctx, m, false)
			continue
		}
		err := a.lookup(ctx, m, true)
		if isNoMatch(err) {
			s.results[i].live = nil // its kind is gone, and so is the object
			continue
		}
		if err != nil {
			return placementv1beta1.WorkStatus{}, err
		}
		live, err := a.cachedGet(ctx, m)
		if err != nil {
			return placementv1beta1.WorkStatus{}, err
		}
		s.results[i].live = live
	}
	a.watchApplied(s)
	a.checkDrifts(ctx, s)

	a.mu.Lock()
	defer a.mu.Unlock()
	status := buildStatus(s, s.results, a.previousStatus(work))
	if ok {
		last.status = status
		a.last[work.Name] = last
	}
	return status, nil
}

// get returns the object of a resolved manifest on the member, or nil if it does not
// exist.
func (a *Applier) get(ctx context.Context, m *manifest) (*unstructured.Unstructured, error) {
	live, err := a.resourceOf(m).Get(ctx, m.obj.GetName(), metav1.GetOptions{})
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to get %s: %w", m.describe(), err)
	}
	return live, nil
}

// cachedGet returns the object of a resolved manifest from the watch's cache when it
// holds it, else from the member's API server. It is only asked about applied
// manifests, so a cache without the object is more likely behind the apply that
// just created it than right: the API server answers then (a missing object costs
// a read; a present one, the usual case, none).
func (a *Applier) cachedGet(ctx context.Context, m *manifest) (*unstructured.Unstructured, error) {
	// The watch sees only what the agent applied (LabelAppliedBy); a create-only
	// object never carries that label.
	if a.watch != nil && !createOnly(m) {
		if live, found := a.watch.get(m.mapping.Resource, m.obj.GetNamespace(), m.obj.GetName()); found && live != nil {
			return live, nil
		}
	}
	return a.get(ctx, m)
}

// watchApplied makes sure the resources of the applied manifests of s are watched.
func (a *Applier) watchApplied(s *scope) {
	if a.watch == nil {
		return
	}
	var blockers []blocker
	var applied []objectRef
	for i, m := range s.manifests {
		if m.mapping == nil {
			continue
		}
		switch {
		case s.results[i].applied == metav1.ConditionTrue:
			a.watch.ensure(m.mapping.Resource, m.obj.GetNamespace())
			applied = append(applied, objectRef{gvr: m.mapping.Resource, namespace: m.obj.GetNamespace(), name: m.obj.GetName()})
		case s.results[i].reason == placementv1beta1.ReasonNotTakenOver:
			blockers = append(blockers, blocker{
				ref:             objectRef{gvr: m.mapping.Resource, namespace: m.obj.GetNamespace(), name: m.obj.GetName()},
				resourceVersion: s.results[i].blockerVersion,
			})
		}
	}
	a.watch.watchBlockers(s.work.Name, blockers)
	a.watch.setApplied(s.work.Name, applied)
	watchedResources.Set(float64(a.watch.resources()))
}

func (a *Applier) resourceOf(m *manifest) dynamic.ResourceInterface {
	return a.dynamic.Resource(m.mapping.Resource).Namespace(m.obj.GetNamespace())
}

// Remove removes what the Applier applied for the named Work, as RemoveWork does.
func (a *Applier) Remove(ctx context.Context, workName string) error {
	_, err := a.RemoveWork(ctx, workName)
	return err
}

// RemoveWork removes what the Applier applied for the named Work: it deletes the
// objects the Work created that still carry its annotation and releases the others
// (see decideRemoval: the Work's delete strategy when it was last applied, objects
// it took over, Namespaces that hold objects no Work applied), then deletes the
// Work's record. It returns the objects released. A Work without a record is already
// removed. Objects that could not be removed stay in the record, for the next call.
func (a *Applier) RemoveWork(ctx context.Context, workName string) ([]Released, error) {
	unlock := a.locks.lock(workName)
	defer unlock()
	log := ctrllog.FromContext(ctx).WithValues("work", workName)
	ctx = ctrllog.IntoContext(ctx, log)

	rec, err := a.getRecord(ctx, workName)
	if err != nil {
		return nil, err
	}
	var released []Released
	if rec != nil {
		if released, err = a.removeAll(ctx, rec); err != nil {
			return released, err
		}
		if err := a.deleteRecord(ctx, workName); err != nil {
			return released, err
		}
		log.V(1).Info("Removed the Work", "deletePolicy", rec.DeletePolicy, "takenOver", rec.TakenOverPolicy, "objects", len(rec.Applied), "released", len(released))
	}
	if a.watch != nil {
		a.watch.watchBlockers(workName, nil)
		a.watch.setApplied(workName, nil)
	}
	a.mu.Lock()
	delete(a.last, workName)
	delete(a.driftMemos, workName)
	a.mu.Unlock()
	return released, nil
}

// Inventory lists the Works the member holds, from their records, sorted by name.
func (a *Applier) Inventory(ctx context.Context) ([]Record, error) {
	return a.listRecords(ctx)
}

// applyStrategyOf returns the Work's apply strategy with the defaults filled in.
func applyStrategyOf(work *placementv1beta1.Work) placementv1beta1.ApplyStrategy {
	var s placementv1beta1.ApplyStrategy
	if work.Spec.ApplyStrategy != nil {
		s = *work.Spec.ApplyStrategy
	}
	if s.Type == "" {
		s.Type = placementv1beta1.ApplyStrategyTypeServerSideApply
	}
	if s.WhenToTakeOver == "" {
		s.WhenToTakeOver = placementv1beta1.WhenToTakeOverIfNoDiff
	}
	if s.WhenToApply == "" {
		s.WhenToApply = placementv1beta1.WhenToApplyAlways
	}
	if s.ComparisonOption == "" {
		s.ComparisonOption = placementv1beta1.PartialComparison
	}
	return s
}

// deletePolicyOf returns the Work's delete propagation policy, Delete by default.
func deletePolicyOf(work *placementv1beta1.Work) placementv1beta1.DeletePropagationPolicy {
	if work.Spec.DeleteStrategy != nil && work.Spec.DeleteStrategy.PropagationPolicy != "" {
		return work.Spec.DeleteStrategy.PropagationPolicy
	}
	return placementv1beta1.DeletePropagationPolicyDelete
}

// takenOverPolicyOf returns what the Work's delete strategy does with the objects it
// took over, Release by default.
func takenOverPolicyOf(work *placementv1beta1.Work) placementv1beta1.TakenOverPolicy {
	if work.Spec.DeleteStrategy != nil && work.Spec.DeleteStrategy.TakenOver != "" {
		return work.Spec.DeleteStrategy.TakenOver
	}
	return placementv1beta1.TakenOverPolicyRelease
}
