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
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// watchingApplier returns an Applier that watches what it applies, and the Works
// it reported changes of so far.
func watchingApplier(t *testing.T, recordNamespace string) (*Applier, func() sets.Set[string]) {
	t.Helper()
	changed := make(chan string, 1024)
	a, err := New(env.Config, Options{Namespace: recordNamespace, OnChange: func(w string) { changed <- w }})
	if err != nil {
		t.Fatalf("New() failed: %v", err)
	}
	t.Cleanup(a.Close)
	seen := sets.New[string]()
	return a, func() sets.Set[string] {
		for {
			select {
			case w := <-changed:
				seen.Insert(w)
			default:
				return seen
			}
		}
	}
}

// editConfigMap changes a ConfigMap on the member as a user would (an update, by
// another field manager).
func editConfigMap(t *testing.T, namespace, name string, edit func(cm *corev1.ConfigMap)) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: namespace, Name: name}, cm); err != nil {
		t.Fatalf("failed to get ConfigMap %s/%s: %v", namespace, name, err)
	}
	edit(cm)
	if err := env.Client.Update(context.Background(), cm, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatalf("failed to update ConfigMap %s/%s: %v", namespace, name, err)
	}
}

// waitForChange waits until the Applier reported a change of the Work.
func waitForChange(t *testing.T, changed func() sets.Set[string], work string) {
	t.Helper()
	eventually(t, 10*time.Second, func() error {
		if !changed().Has(work) {
			return fmt.Errorf("no change of Work %s reported yet", work)
		}
		return nil
	})
}

// statusWhen polls Status until ok accepts it; the watch's cache may not have seen
// a change yet.
func statusWhen(t *testing.T, a *Applier, work *placementv1beta1.Work, ok func(placementv1beta1.WorkStatus) error) placementv1beta1.WorkStatus {
	t.Helper()
	var status placementv1beta1.WorkStatus
	eventually(t, 10*time.Second, func() error {
		var err error
		if status, err = a.Status(testContext(t), work); err != nil {
			return err
		}
		return ok(status)
	})
	return status
}

func manifestCondition(i int, typ, want string) func(placementv1beta1.WorkStatus) error {
	return func(s placementv1beta1.WorkStatus) error {
		if got := conditionSummary(s.ManifestConditions[i].Conditions, typ); got != want {
			return fmt.Errorf("manifest %d: %s = %s, want %s", i, typ, got, want)
		}
		return nil
	}
}

func configMapData(t *testing.T, namespace, name string) map[string]string {
	t.Helper()
	data, _, _ := unstructured.NestedStringMap(mustGetObject(t, configMapsGVR, namespace, name).Object, "data")
	return data
}

func TestTheWatchReportsChangesOfAppliedObjectsOnly(t *testing.T) {
	ctx := testContext(t)
	const ns = "watch"
	createNamespace(t, ns)
	createConfigMap(t, ns, "not-ours", map[string]string{"k": "v"})
	a, changed := watchingApplier(t, "records-watch")
	work := newWork("watched", 1, configMapManifest(t, ns, "ours", map[string]any{"k": "v"}))
	if _, err := a.Apply(ctx, work); err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	if got := mustGetObject(t, configMapsGVR, ns, "ours").GetLabels()[LabelAppliedBy]; got != AppliedByAgent {
		t.Fatalf("the applied object has %s=%q, want %q", LabelAppliedBy, got, AppliedByAgent)
	}
	waitForChange(t, changed, "watched") // the informer's initial list

	changed().Clear()
	editConfigMap(t, ns, "not-ours", func(cm *corev1.ConfigMap) { cm.Data["k"] = "changed" })
	editConfigMap(t, ns, "ours", func(cm *corev1.ConfigMap) { cm.Data["k"] = "changed" })
	waitForChange(t, changed, "watched")
	if got := changed().UnsortedList(); len(got) != 1 {
		t.Errorf("changes reported for Works %v, want only watched", got)
	}
	if a.watch.resources() != 1 {
		t.Errorf("watched resources = %d, want 1 (configmaps)", a.watch.resources())
	}
}

func TestWhenToApplyAlwaysRevertsADriftAndRecordsIt(t *testing.T) {
	ctx := testContext(t)
	const ns = "drift-always"
	createNamespace(t, ns)
	a, changed := watchingApplier(t, "records-drift-always")
	work := newWork("always", 1, configMapManifest(t, ns, "cm", map[string]any{"k": "hub"}))
	if _, err := a.Apply(ctx, work); err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	changed().Clear()
	editConfigMap(t, ns, "cm", func(cm *corev1.ConfigMap) { cm.Data["k"] = "member"; cm.Data["extra"] = "kept" })
	waitForChange(t, changed, "always")

	status := statusWhen(t, a, work, func(s placementv1beta1.WorkStatus) error {
		if s.ManifestConditions[0].DriftCorrections == nil {
			return fmt.Errorf("no drift corrected yet")
		}
		return nil
	})
	if diff := cmp.Diff(map[string]string{"k": "hub", "extra": "kept"}, configMapData(t, ns, "cm")); diff != "" {
		t.Errorf("data on the member after the drift mismatch (-want +got):\n%s", diff)
	}
	mc := status.ManifestConditions[0]
	if got := conditionSummary(mc.Conditions, placementv1beta1.ConditionApplied); got != "True/Applied" {
		t.Errorf("Applied = %s, want True/Applied", got)
	}
	if c := mc.DriftCorrections; c == nil || c.Count != 1 || c.LastCorrectionTime == nil || !cmp.Equal(c.LastDriftedPaths, []string{"/data/k"}) {
		t.Errorf("DriftCorrections = %+v, want one correction of /data/k", c)
	}
	if mc.DriftDetails != nil {
		t.Errorf("DriftDetails = %+v, want none (the drift was reverted)", mc.DriftDetails)
	}
}

func TestWhenToApplyIfNotDriftedReportsEveryDriftedPathAndLeavesIt(t *testing.T) {
	ctx := testContext(t)
	const ns = "drift-report"
	createNamespace(t, ns)
	a, changed := watchingApplier(t, "records-drift-report")
	work := newWork("ifnotdrifted", 1, configMapManifest(t, ns, "cm", map[string]any{"a": "1", "b": "2"}))
	work.Spec.ApplyStrategy = &placementv1beta1.ApplyStrategy{WhenToApply: placementv1beta1.WhenToApplyIfNotDrifted}
	if _, err := a.Apply(ctx, work); err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	changed().Clear()
	editConfigMap(t, ns, "cm", func(cm *corev1.ConfigMap) { cm.Data["a"] = "changed"; delete(cm.Data, "b") })
	waitForChange(t, changed, "ifnotdrifted")

	status := statusWhen(t, a, work, manifestCondition(0, placementv1beta1.ConditionApplied, "False/FoundDrifts"))
	if diff := cmp.Diff(map[string]string{"a": "changed"}, configMapData(t, ns, "cm")); diff != "" {
		t.Errorf("IfNotDrifted changed the member (-want +got):\n%s", diff)
	}
	if got := conditionSummary(status.Conditions, placementv1beta1.ConditionApplied); got != "False/FoundDrifts" {
		t.Errorf("Work Applied = %s, want False/FoundDrifts", got)
	}
	d := status.ManifestConditions[0].DriftDetails
	if d == nil || d.FirstDriftedObservedTime == nil || d.ObservationTime == nil {
		t.Fatalf("DriftDetails = %+v, want drifts with times", d)
	}
	want := []placementv1beta1.PatchDetail{
		{Path: "/data/a", ValueInMember: "changed", ValueInHub: "1"},
		{Path: "/data/b", ValueInHub: "2"},
	}
	if diff := cmp.Diff(want, d.ObservedDrifts); diff != "" {
		t.Errorf("ObservedDrifts mismatch (-want +got):\n%s", diff)
	}
	first := d.FirstDriftedObservedTime.Time

	// Looking again keeps the first observation time; setting the member back
	// ends the drift.
	again, err := a.Status(ctx, work)
	if err != nil {
		t.Fatalf("Status() failed: %v", err)
	}
	if got := again.ManifestConditions[0].DriftDetails; got == nil || !got.FirstDriftedObservedTime.Time.Equal(first) {
		t.Errorf("FirstDriftedObservedTime moved: %+v, want %s", got, first)
	}
	editConfigMap(t, ns, "cm", func(cm *corev1.ConfigMap) { cm.Data = map[string]string{"a": "1", "b": "2"} })
	eventually(t, 10*time.Second, func() error {
		st, err := a.Status(ctx, work)
		if err != nil {
			return err
		}
		if got := conditionSummary(st.Conditions, placementv1beta1.ConditionApplied); got != "True/Applied" {
			return fmt.Errorf("Work Applied = %s, want True/Applied once the member matches again", got)
		}
		return nil
	})
}

func TestComparisonOptionDecidesWhetherMemberAddedLabelsAreDrifts(t *testing.T) {
	ctx := testContext(t)
	const ns = "drift-compare"
	createNamespace(t, ns)
	tests := []struct {
		option placementv1beta1.ComparisonOption
		want   []placementv1beta1.PatchDetail
	}{
		{option: placementv1beta1.PartialComparison, want: nil},
		{option: placementv1beta1.FullComparison, want: []placementv1beta1.PatchDetail{{Path: "/metadata/labels/added", ValueInMember: "on-member"}}},
	}
	for _, tt := range tests {
		t.Run(string(tt.option), func(t *testing.T) {
			a := newApplier(t, "records-drift-compare")
			name := strings.ToLower(string(tt.option))
			work := newWork(name, 1, configMapManifest(t, ns, name, map[string]any{"k": "v"}))
			work.Spec.ApplyStrategy = &placementv1beta1.ApplyStrategy{WhenToApply: placementv1beta1.WhenToApplyIfNotDrifted, ComparisonOption: tt.option}
			if _, err := a.Apply(ctx, work); err != nil {
				t.Fatalf("Apply() failed: %v", err)
			}
			editConfigMap(t, ns, name, func(cm *corev1.ConfigMap) { cm.Labels["added"] = "on-member" })
			status, err := a.Status(ctx, work)
			if err != nil {
				t.Fatalf("Status() failed: %v", err)
			}
			var got []placementv1beta1.PatchDetail
			if d := status.ManifestConditions[0].DriftDetails; d != nil {
				got = d.ObservedDrifts
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("drifts mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAvailabilityRulesJudgeKindsAndFollowTheirObjects(t *testing.T) {
	ctx := testContext(t)
	const ns = "avail-rules"
	createNamespace(t, ns)
	a, changed := watchingApplier(t, "records-avail-rules")
	work := newWork("rules", 1, configMapManifest(t, ns, "cm", map[string]any{"phase": "Pending"}))
	work.Spec.ApplyStrategy = &placementv1beta1.ApplyStrategy{WhenToApply: placementv1beta1.WhenToApplyIfNotDrifted}
	work.Spec.AvailabilityRules = []placementv1beta1.AvailabilityRule{{Kind: "ConfigMap", Expression: `self.data.phase == "Ready"`}}
	status, err := a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	if got := conditionSummary(status.ManifestConditions[0].Conditions, placementv1beta1.ConditionAvailable); got != "False/NotAvailableYet" {
		t.Errorf("Available before the rule holds = %s, want False/NotAvailableYet", got)
	}

	// The member's object changes (drift left alone): the watch brings the
	// re-evaluation.
	changed().Clear()
	editConfigMap(t, ns, "cm", func(cm *corev1.ConfigMap) { cm.Data["phase"] = "Ready" })
	waitForChange(t, changed, "rules")
	statusWhen(t, a, work, manifestCondition(0, placementv1beta1.ConditionAvailable, "True/Available"))

	work.Spec.AvailabilityRules = []placementv1beta1.AvailabilityRule{{Kind: "ConfigMap", Expression: `self.data.phase ==`}}
	status, err = a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	c := condition(t, status.ManifestConditions[0].Conditions, placementv1beta1.ConditionAvailable)
	if c.Status != metav1.ConditionFalse || c.Reason != placementv1beta1.ReasonAvailabilityRuleInvalid || !strings.Contains(c.Message, "does not compile: ERROR: <input>:1:") {
		t.Errorf("Available with a rule that does not compile = %s/%s %q, want False/AvailabilityRuleInvalid with the compiler's message", c.Status, c.Reason, c.Message)
	}
}

func TestStatusFeedbackReportsJSONPathValuesAndPathsThatDoNotParse(t *testing.T) {
	ctx := testContext(t)
	const ns = "feedback"
	createNamespace(t, ns)
	a := newApplier(t, "records-feedback")
	work := newWork("feedback", 1, configMapManifest(t, ns, "cm", map[string]any{"k": "value"}), namespaceManifest(t, "feedback-other"))
	work.Spec.StatusFeedback = []placementv1beta1.StatusFeedbackRule{{
		Version: "v1", Kind: "ConfigMap",
		JSONPaths: []placementv1beta1.JSONPathRule{
			{Name: "k", Path: ".data.k"},
			{Name: "braces", Path: "{.metadata.name}"},
			{Name: "missing", Path: ".data.nothing"},
			{Name: "broken", Path: "{.data[}"},
		},
	}}
	status, err := a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	got := status.ManifestConditions[0].Feedback
	if len(got) != 4 || !strings.HasPrefix(got[3].Error, `the JSONPath "{.data[}" does not parse: `) {
		t.Fatalf("feedback = %+v, want four values, the last with the parser's error", got)
	}
	got[3].Error = ""
	want := []placementv1beta1.FeedbackValue{{Name: "k", Value: "value"}, {Name: "braces", Value: "cm"}, {Name: "missing"}, {Name: "broken"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("feedback mismatch (-want +got):\n%s", diff)
	}
	if f := status.ManifestConditions[1].Feedback; f != nil {
		t.Errorf("feedback of a Namespace = %+v, want none (no rule asks about it)", f)
	}
}

func TestClientSideApplyIsAThreeWayMerge(t *testing.T) {
	ctx := testContext(t)
	const ns = "csa"
	createNamespace(t, ns)
	a := newApplier(t, "records-csa")
	csa := &placementv1beta1.ApplyStrategy{Type: placementv1beta1.ApplyStrategyTypeClientSideApply}
	work := newWork("csa", 1, configMapManifest(t, ns, "cm", map[string]any{"a": "1", "dropped": "2"}))
	work.Spec.ApplyStrategy = csa
	if _, err := a.Apply(ctx, work); err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	if ann := mustGetObject(t, configMapsGVR, ns, "cm").GetAnnotations()[AnnotationLastApplied]; !strings.Contains(ann, `"dropped":"2"`) {
		t.Fatalf("%s = %q, want the applied configuration", AnnotationLastApplied, ann)
	}
	editConfigMap(t, ns, "cm", func(cm *corev1.ConfigMap) { cm.Data["member"] = "kept" })

	next := newWork("csa", 2, configMapManifest(t, ns, "cm", map[string]any{"a": "changed"}))
	next.Spec.ApplyStrategy = csa
	status, err := a.Apply(ctx, next)
	if err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	if got := conditionSummary(status.Conditions, placementv1beta1.ConditionApplied); got != "True/Applied" {
		t.Fatalf("Applied = %s, want True/Applied", got)
	}
	if diff := cmp.Diff(map[string]string{"a": "changed", "member": "kept"}, configMapData(t, ns, "cm")); diff != "" {
		t.Errorf("data after the three-way merge mismatch (-want +got):\n%s", diff)
	}
}

func TestGuardsRefuseTheAgentsNamespaceRBACAndDenyLists(t *testing.T) {
	ctx := testContext(t)
	const own = "records-guards"
	createNamespace(t, "guards")
	createNamespace(t, "guards-denied")
	a, err := New(env.Config, Options{
		Namespace:        own,
		DeniedKinds:      []schema.GroupKind{{Group: "", Kind: "Secret"}},
		DeniedNamespaces: []string{"guards-denied"},
	})
	if err != nil {
		t.Fatalf("New() failed: %v", err)
	}
	work := newWork("guards", 1,
		configMapManifest(t, own, "identity-neighbour", map[string]any{"k": "v"}),
		namespaceManifest(t, own),
		manifestOf(t, map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "flotilla-agent"}, "rules": []any{}}),
		manifestOf(t, map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s", "namespace": "guards"}}),
		configMapManifest(t, "guards-denied", "cm", map[string]any{"k": "v"}),
		configMapManifest(t, "guards", "allowed", map[string]any{"k": "v"}),
	)
	status, err := a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	wantMessages := []string{
		"namespace records-guards is the agent's own",
		"namespace records-guards is the agent's own",
		"it is the agent's own RBAC",
		"kind Secret is on the agent's deny-list (--deny-kinds)",
		"namespace guards-denied is on the agent's deny-list (--deny-namespaces)",
		"applied",
	}
	for i, want := range wantMessages {
		c := condition(t, status.ManifestConditions[i].Conditions, placementv1beta1.ConditionApplied)
		if !strings.Contains(c.Message, want) {
			t.Errorf("manifest %d: Applied = %s %q, want a message with %q", i, c.Status, c.Message, want)
		}
	}
	if obj := getObject(t, configMapsGVR, own, "identity-neighbour"); obj != nil {
		t.Errorf("the agent applied into its own namespace")
	}
}

func TestAnObjectThatKeepsAManifestFromBeingAppliedIsWatchedUntilItGoes(t *testing.T) {
	ctx := testContext(t)
	const ns = "watch-blocker"
	createNamespace(t, ns)
	createConfigMap(t, ns, "theirs", map[string]string{"k": "member"})
	a, changed := watchingApplier(t, "records-watch-blocker")
	work := newWork("blocked", 1, configMapManifest(t, ns, "theirs", map[string]any{"k": "hub"}))
	work.Spec.ApplyStrategy = &placementv1beta1.ApplyStrategy{WhenToTakeOver: placementv1beta1.WhenToTakeOverNever}
	status, err := a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	if err := manifestCondition(0, placementv1beta1.ConditionApplied, "False/"+placementv1beta1.ReasonNotTakenOver)(status); err != nil {
		t.Fatal(err)
	}
	if got := a.watch.blockerWatches(); got != 1 {
		t.Fatalf("blocker watches = %d, want 1", got)
	}

	// Its deletion is a change of the Work.
	if err := env.Client.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "theirs"}}); err != nil {
		t.Fatal(err)
	}
	waitForChange(t, changed, "blocked")

	status, err = a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	if err := manifestCondition(0, placementv1beta1.ConditionApplied, "True/"+placementv1beta1.ReasonApplied)(status); err != nil {
		t.Fatal(err)
	}
	if got := a.watch.blockerWatches(); got != 0 {
		t.Errorf("blocker watches after the apply succeeded = %d, want 0", got)
	}
}

// A blocker's watch begins after the apply that refused it: a deletion or an edit
// in between is a change all the same (CI once deleted the blocker in that gap, and
// the Work waited for its next retry).
func TestABlockerThatChangesBeforeItsWatchBeginsIsAChange(t *testing.T) {
	const ns = "watch-blocker-gap"
	createNamespace(t, ns)
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, name string)
	}{
		{name: "deleted", change: func(t *testing.T, name string) {
			if err := env.Client.Delete(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "edited", change: func(t *testing.T, name string) {
			editConfigMap(t, ns, name, func(cm *corev1.ConfigMap) { cm.Data["k"] = "edited" })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			createConfigMap(t, ns, tc.name, map[string]string{"k": "member"})
			seen := &corev1.ConfigMap{}
			if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: tc.name}, seen); err != nil {
				t.Fatal(err)
			}
			a, changed := watchingApplier(t, "records-watch-gap-"+tc.name)
			tc.change(t, tc.name)
			a.watch.watchBlockers("gap", []blocker{{
				ref:             objectRef{gvr: configMaps, namespace: ns, name: tc.name},
				resourceVersion: seen.ResourceVersion,
			}})
			waitForChange(t, changed, "gap")
		})
	}
}

func TestForceFalseLeavesAFieldAnotherManagerOwnsToIt(t *testing.T) {
	ctx := testContext(t)
	const ns = "force-false"
	createNamespace(t, ns)
	a, changed := watchingApplier(t, "records-force-false")
	work := newWork("leave-it", 1, configMapManifest(t, ns, "cm", map[string]any{"k": "hub", "other": "hub"}))
	work.Spec.ApplyStrategy = &placementv1beta1.ApplyStrategy{
		ServerSideApplyConfig: &placementv1beta1.ServerSideApplyConfig{Force: ptr.To(false)},
	}
	if _, err := a.Apply(ctx, work); err != nil {
		t.Fatalf("Apply() failed: %v", err)
	}
	changed().Clear()
	// kubectl-edit now owns data.k.
	editConfigMap(t, ns, "cm", func(cm *corev1.ConfigMap) { cm.Data["k"] = "member" })
	waitForChange(t, changed, "leave-it")

	conflictReported := func(st placementv1beta1.WorkStatus) error {
		c := meta.FindStatusCondition(st.ManifestConditions[0].Conditions, placementv1beta1.ConditionApplied)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != placementv1beta1.ReasonApplyFailed ||
			!strings.Contains(c.Message, `conflict with "kubectl-edit"`) || !strings.Contains(c.Message, "force is false") {
			return fmt.Errorf("Applied = %+v, want False/ApplyFailed naming the conflict with kubectl-edit and force", c)
		}
		return nil
	}
	// The watch saw the edit: looking again reports the conflict and takes nothing.
	statusWhen(t, a, work, conflictReported)
	if diff := cmp.Diff(map[string]string{"k": "member", "other": "hub"}, configMapData(t, ns, "cm")); diff != "" {
		t.Errorf("looking again took the field kubectl-edit owns (-want +got):\n%s", diff)
	}
	// Applying the Work again does the same.
	st, err := a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("Apply() again failed: %v", err)
	}
	if err := conflictReported(st); err != nil {
		t.Errorf("applying again: %v", err)
	}
	if diff := cmp.Diff(map[string]string{"k": "member", "other": "hub"}, configMapData(t, ns, "cm")); diff != "" {
		t.Errorf("applying again took the field kubectl-edit owns (-want +got):\n%s", diff)
	}

	// Unset, the Work's own fields are the hub's: the edit is reverted.
	work.Spec.ApplyStrategy = nil
	work.Generation = 2
	st, err = a.Apply(ctx, work)
	if err != nil {
		t.Fatalf("Apply() with force unset failed: %v", err)
	}
	if got := conditionSummary(st.ManifestConditions[0].Conditions, placementv1beta1.ConditionApplied); got != "True/Applied" {
		t.Errorf("Applied with force unset = %s, want True/Applied", got)
	}
	if diff := cmp.Diff(map[string]string{"k": "hub", "other": "hub"}, configMapData(t, ns, "cm")); diff != "" {
		t.Errorf("with force unset the hub's value did not win (-want +got):\n%s", diff)
	}
}
