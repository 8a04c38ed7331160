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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func workWithRaw(raw ...string) *placementv1beta1.Work {
	w := &placementv1beta1.Work{}
	for _, r := range raw {
		w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, placementv1beta1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(r)}})
	}
	return w
}

func TestSpecHash(t *testing.T) {
	base := SpecHash(workWithRaw(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"x":"1","y":"2"}}`))
	tests := []struct {
		name     string
		work     *placementv1beta1.Work
		wantSame bool
	}{
		{
			name:     "keys in another order and other whitespace hash the same",
			work:     workWithRaw("{\n  \"kind\": \"ConfigMap\", \"data\": {\"y\":\"2\", \"x\":\"1\"},\n \"metadata\":{\"name\":\"a\"}, \"apiVersion\":\"v1\"}"),
			wantSame: true,
		},
		{
			name:     "a changed value hashes differently",
			work:     workWithRaw(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"x":"1","y":"3"}}`),
			wantSame: false,
		},
		{
			name: "a different apply strategy hashes differently",
			work: func() *placementv1beta1.Work {
				w := workWithRaw(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"x":"1","y":"2"}}`)
				w.Spec.ApplyStrategy = &placementv1beta1.ApplyStrategy{WhenToTakeOver: placementv1beta1.WhenToTakeOverNever}
				return w
			}(),
			wantSame: false,
		},
		{
			name: "the metadata and status of the Work do not count",
			work: func() *placementv1beta1.Work {
				w := workWithRaw(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"x":"1","y":"2"}}`)
				w.Name, w.Generation = "other", 7
				w.Status.Conditions = append(w.Status.Conditions, w.Status.Conditions...)
				return w
			}(),
			wantSame: true,
		},
		{
			name: "a manifest given as an object hashes like its JSON",
			work: func() *placementv1beta1.Work {
				obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}, "data": map[string]any{"x": "1", "y": "2"}}}
				w := &placementv1beta1.Work{}
				w.Spec.Workload.Manifests = []placementv1beta1.Manifest{{RawExtension: runtime.RawExtension{Object: obj}}}
				return w
			}(),
			wantSame: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SpecHash(tt.work)
			if (got == base) != tt.wantSame {
				t.Errorf("SpecHash() = %s, base %s; want same = %v", got, base, tt.wantSame)
			}
			if len(got) != 64 {
				t.Errorf("SpecHash() = %q, want 64 hex digits", got)
			}
		})
	}
	if a, b := SpecHash(workWithRaw(`{not json`)), SpecHash(workWithRaw(`{not json`)); a != b {
		t.Errorf("SpecHash() of a spec with invalid JSON is not stable: %s, %s", a, b)
	}
}

func TestDiffs(t *testing.T) {
	cm := func(fields map[string]any) *unstructured.Unstructured {
		o := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "resourceVersion": "5", "managedFields": []any{}}}
		for k, v := range fields {
			o[k] = v
		}
		return &unstructured.Unstructured{Object: o}
	}
	tests := []struct {
		name      string
		hub, live *unstructured.Unstructured
		changed   []placementv1beta1.PatchDetail
		extra     []placementv1beta1.PatchDetail
	}{
		{
			name:    "equal objects do not differ",
			hub:     cm(map[string]any{"data": map[string]any{"k": "v"}}),
			live:    cm(map[string]any{"data": map[string]any{"k": "v"}}),
			changed: nil,
		},
		{
			name:    "a changed value, a missing key and an extra key are all changes",
			hub:     cm(map[string]any{"data": map[string]any{"k": "new", "add": "x"}}),
			live:    cm(map[string]any{"data": map[string]any{"k": "old", "extra": "y"}}),
			changed: []placementv1beta1.PatchDetail{{Path: "/data/add", ValueInHub: "x"}, {Path: "/data/extra", ValueInMember: "y"}, {Path: "/data/k", ValueInHub: "new", ValueInMember: "old"}},
			extra:   []placementv1beta1.PatchDetail{{Path: "/data/extra", ValueInMember: "y"}},
		},
		{
			name: "lists of the same length are compared by element, others as a whole",
			hub:  cm(map[string]any{"spec": map[string]any{"a": []any{"x", "y"}, "b": []any{int64(1)}}}),
			live: cm(map[string]any{"spec": map[string]any{"a": []any{"x", "z"}, "b": []any{int64(1), int64(2)}}}),
			changed: []placementv1beta1.PatchDetail{
				{Path: "/spec/a/1", ValueInHub: "y", ValueInMember: "z"},
				{Path: "/spec/b", ValueInHub: "[1]", ValueInMember: "[1,2]"},
			},
		},
		{
			name: "the Applier's annotation, bookkeeping and status are ignored, other annotations are not",
			hub: func() *unstructured.Unstructured {
				o := cm(map[string]any{"status": map[string]any{"x": "1"}})
				o.SetAnnotations(map[string]string{AnnotationWork: "w", "team/owner": "a"})
				o.SetResourceVersion("9")
				return o
			}(),
			live: func() *unstructured.Unstructured {
				o := cm(nil)
				o.SetAnnotations(map[string]string{"team/owner": "b"})
				return o
			}(),
			changed: []placementv1beta1.PatchDetail{{Path: "/metadata/annotations/team~1owner", ValueInHub: "a", ValueInMember: "b"}},
		},
		{
			name: "fields set only on the member are extra, labels included",
			hub:  cm(map[string]any{"data": map[string]any{"k": "v"}}),
			live: func() *unstructured.Unstructured {
				o := cm(map[string]any{"data": map[string]any{"k": "v"}, "binaryData": map[string]any{}})
				o.SetLabels(map[string]string{"l": "1"})
				return o
			}(),
			extra: []placementv1beta1.PatchDetail{{Path: "/binaryData", ValueInMember: "{}"}, {Path: "/metadata/labels/l", ValueInMember: "1"}},
			changed: []placementv1beta1.PatchDetail{
				{Path: "/binaryData", ValueInMember: "{}"},
				{Path: "/metadata/labels", ValueInMember: `{"l":"1"}`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.changed, changedPaths(tt.live, tt.hub)); diff != "" {
				t.Errorf("changedPaths() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.extra, extraPaths(tt.hub, tt.live)); diff != "" {
				t.Errorf("extraPaths() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergeDiffsSortsDeduplicatesAndCaps(t *testing.T) {
	var many []placementv1beta1.PatchDetail
	for i := 0; i < 150; i++ {
		many = append(many, placementv1beta1.PatchDetail{Path: "/data/" + strings.Repeat("k", 1+i%150)})
	}
	got, total := mergeDiffs(many, many[:10])
	if total != 150 || len(got) != maxDiffs {
		t.Errorf("mergeDiffs() kept %d of %d, want %d of 150", len(got), total, maxDiffs)
	}
	if got[0].Path != "/data/k" {
		t.Errorf("mergeDiffs() first = %q, want the smallest path", got[0].Path)
	}
}

func TestFormatValueCutsLongValues(t *testing.T) {
	long := strings.Repeat("é", 400)
	got := formatValue(long)
	if len(got) > maxDiffValue || !strings.HasSuffix(got, "...") {
		t.Errorf("formatValue() of a long string = %d bytes %q..., want at most %d ending in ...", len(got), got[:10], maxDiffValue)
	}
	if got := formatValue(map[string]any{"b": int64(1), "a": true}); got != `{"a":true,"b":1}` {
		t.Errorf("formatValue() of a map = %q", got)
	}
}

func TestRecordName(t *testing.T) {
	tests := []struct {
		name string
		work string
		want string
	}{
		{name: "a short Work name is prefixed", work: "crp-1-work", want: "work-crp-1-work"},
		{name: "a long Work name is cut and hashed", work: strings.Repeat("a", 253), want: "work-" + strings.Repeat("a", 231) + "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := recordName(tt.work)
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("recordName() = %q, want prefix %q", got, tt.want)
			}
			if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
				t.Errorf("recordName() = %q is not a valid name: %v", got, errs)
			}
		})
	}
	if recordName(strings.Repeat("a", 253)) == recordName(strings.Repeat("a", 252)+"b") {
		t.Errorf("recordName() of two long names is the same")
	}
}

func TestRecordRoundTripsThroughItsConfigMap(t *testing.T) {
	want := &Record{
		WorkName: "w", Hash: "abc", DeletePolicy: placementv1beta1.DeletePropagationPolicyAbandon, TakenOverPolicy: placementv1beta1.TakenOverPolicyRelease, AllApplied: true,
		Applied: []ObjectRef{{Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespace: "ns", Name: "d", Created: true, UID: "u-1"}},
	}
	cm, err := want.configMap("flotilla-system")
	if err != nil {
		t.Fatal(err)
	}
	got, err := recordFromConfigMap(cm)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("record round trip mismatch (-want +got):\n%s", diff)
	}
	if !want.equal(got) {
		t.Errorf("equal() is false for equal records")
	}
}

func TestARecordKeepsItsWorkAndIsResumableOnlyWhenItMatches(t *testing.T) {
	work := &placementv1beta1.Work{
		ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "flotilla-member-m", Generation: 3, ResourceVersion: "42", Labels: map[string]string{"l": "v"}},
		Spec: placementv1beta1.WorkSpec{Workload: placementv1beta1.WorkloadTemplate{Manifests: []placementv1beta1.Manifest{
			{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"default"}}`)}},
		}}},
		Status: placementv1beta1.WorkStatus{Conditions: []metav1.Condition{{Type: "Applied", Status: metav1.ConditionTrue}}},
	}
	kept := recordedWork(work)
	if kept.ResourceVersion != "" || len(kept.Status.Conditions) != 0 || kept.Generation != 3 || kept.Labels["l"] != "v" {
		t.Errorf("recordedWork kept %+v, want name, namespace, labels, annotations, generation and spec only", kept.ObjectMeta)
	}
	rec := &Record{WorkName: "w", Hash: SpecHash(work), TakenOverPolicy: placementv1beta1.TakenOverPolicyRelease, AllApplied: true, Work: kept}
	cm, err := rec.configMap("flotilla-system")
	if err != nil {
		t.Fatal(err)
	}
	got, err := recordFromConfigMap(cm)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rec, got); diff != "" {
		t.Errorf("the kept Work did not round-trip (-want +got):\n%s", diff)
	}
	if !rec.equal(got) || SpecHash(got.Work) != rec.Hash {
		t.Errorf("the kept Work hashes to %s after a round trip, want %s", SpecHash(got.Work), rec.Hash)
	}
	other := *rec
	other.Hash = "another"
	for _, tc := range []struct {
		name string
		rec  Record
		want bool
	}{
		{"applied in full, keeping the Work of its hash", *rec, true},
		{"not applied in full", Record{WorkName: "w", Hash: rec.Hash, Work: kept}, false},
		{"keeping no Work (an older agent's record)", Record{WorkName: "w", Hash: rec.Hash, AllApplied: true}, false},
		{"keeping a Work of another hash", other, false},
		{"keeping the Work of another name", Record{WorkName: "v", Hash: rec.Hash, AllApplied: true, Work: kept}, false},
		{"with no hash (an apply that never finished)", Record{WorkName: "w", AllApplied: true, Work: kept}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.rec.Resumable(); got != tc.want {
				t.Errorf("Resumable() = %v, want %v", got, tc.want)
			}
		})
	}
	big := work.DeepCopy()
	big.Spec.Workload.Manifests[0].Raw = []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"x":"` + strings.Repeat("x", RecordWorkLimit) + `"}}`)
	if recordedWork(big) != nil {
		t.Errorf("a Work over RecordWorkLimit was kept")
	}
	if other.equal(rec) {
		t.Errorf("records of different hashes are equal")
	}
}

func TestRegisterTwiceWithOneRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	if err := Register(reg); err != nil {
		t.Fatalf("Register() failed: %v", err)
	}
	if err := Register(reg); err != nil {
		t.Fatalf("second Register() failed: %v", err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
	}
	if diff := cmp.Diff([]string{"flotilla_agent_apply_total", "flotilla_agent_drifts_total", "flotilla_agent_manifests_removed_total", "flotilla_agent_objects_released_total", "flotilla_agent_watched_resources"}, names); diff != "" {
		t.Errorf("registered metrics mismatch (-want +got):\n%s", diff)
	}
}

func TestApplyOrderPutsNamespacesThenCRDsFirst(t *testing.T) {
	w := workWithRaw(
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n"}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"c"}}`,
		`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n"}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"n"}}`,
		`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"m"}}`,
	)
	var got []int
	for _, m := range applyOrder(decodeManifests(w)) {
		got = append(got, m.ordinal)
	}
	if diff := cmp.Diff([]int{2, 4, 1, 0, 3}, got); diff != "" {
		t.Errorf("applyOrder() mismatch (-want +got):\n%s", diff)
	}
}

func TestDecodeManifestStripsWhatMustNotBeApplied(t *testing.T) {
	w := workWithRaw(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n","resourceVersion":"1","uid":"u","creationTimestamp":"2020-01-01T00:00:00Z","generation":3,"managedFields":[{"manager":"x"}],"ownerReferences":[{"apiVersion":"placement.flotilla.io/v1beta1","kind":"Work","name":"w","uid":"u"}],"labels":{"l":"1"}},"data":{"k":"v"},"status":{"x":1}}`,
		`{"kind":"ConfigMap","metadata":{"name":"a"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"a-"}}`,
	)
	ms := decodeManifests(w)
	want := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "namespace": "n", "labels": map[string]any{"l": "1"}},
		"data":     map[string]any{"k": "v"},
	}
	if diff := cmp.Diff(want, ms[0].obj.Object); diff != "" {
		t.Errorf("decoded manifest mismatch (-want +got):\n%s", diff)
	}
	for i, wantErr := range map[int]string{1: "apiVersion is not set", 2: "metadata.name is not set; metadata.generateName is not supported"} {
		if ms[i].err == nil || !strings.HasSuffix(ms[i].err.Error(), wantErr) {
			t.Errorf("manifest %d error = %v, want %q", i, ms[i].err, wantErr)
		}
	}
}

func TestExtraMetadataListsWhatTheMemberAddedButNotServerSetKeys(t *testing.T) {
	body := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{
		"labels": map[string]any{"app": "web", LabelAppliedBy: AppliedByAgent},
	}}}
	live := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{
		"labels": map[string]any{"app": "web", LabelAppliedBy: AppliedByAgent, "team": "blue"},
		"annotations": map[string]any{
			"deployment.kubernetes.io/revision": "3",
			AnnotationLastApplied:               "{}",
			"note/with-slash":                   "x",
		},
	}}}
	want := []placementv1beta1.PatchDetail{
		{Path: "/metadata/labels/team", ValueInMember: "blue"},
		{Path: "/metadata/annotations/note~1with-slash", ValueInMember: "x"},
	}
	if diff := cmp.Diff(want, extraMetadata(body, live)); diff != "" {
		t.Errorf("extraMetadata() mismatch (-want +got):\n%s", diff)
	}
}

func TestRelaxedJSONPaths(t *testing.T) {
	for in, want := range map[string]string{
		".status.readyReplicas":                    "{.status.readyReplicas}",
		"status.readyReplicas":                     "{.status.readyReplicas}",
		"{.status.conditions[0].type}":             "{.status.conditions[0].type}",
		" .spec.replicas ":                         "{.spec.replicas}",
		`{.status.conditions[?(@.type=="Ready")]}`: `{.status.conditions[?(@.type=="Ready")]}`,
	} {
		if got := relaxed(in); got != want {
			t.Errorf("relaxed(%q) = %q, want %q", in, got, want)
		}
	}
	if err := ParseJSONPath("{.a[}"); err == nil || !strings.Contains(err.Error(), "does not parse") {
		t.Errorf("ParseJSONPath(broken) = %v, want a parse error", err)
	}
}

func TestDeniedNamesTheRule(t *testing.T) {
	a := &Applier{opts: Options{Namespace: "flotilla-system", DeniedNamespaces: []string{"kube-system"},
		DeniedKinds: []schema.GroupKind{{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}}}}
	a.opts.setDefaults()
	mf := func(apiVersion, kind, namespace, name string) *manifest {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
		obj.SetNamespace(namespace)
		obj.SetName(name)
		return &manifest{obj: obj, gvk: obj.GroupVersionKind()}
	}
	tests := []struct {
		m    *manifest
		want string
	}{
		{mf("v1", "Secret", "flotilla-system", "flotilla-agent-identity"), "namespace flotilla-system is the agent's own"},
		{mf("v1", "Namespace", "", "flotilla-system"), "namespace flotilla-system is the agent's own"},
		{mf("v1", "ConfigMap", "kube-system", "x"), "namespace kube-system is on the agent's deny-list"},
		{mf("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "anything"), "kind ClusterRoleBinding.rbac.authorization.k8s.io is on the agent's deny-list"},
		{mf("rbac.authorization.k8s.io/v1", "ClusterRole", "", "flotilla-agent"), "it is the agent's own RBAC"},
		{mf("rbac.authorization.k8s.io/v1", "ClusterRole", "", "someone-elses"), ""},
		{mf("v1", "ConfigMap", "app", "x"), ""},
		// The hub's machinery, refused on every member, the hub joined as a member included.
		{mf("v1", "ConfigMap", "flotilla-member-hub", "x"), "namespace flotilla-member-hub is a member's Work namespace on the hub (flotilla-member-*)"},
		{mf("v1", "Namespace", "", "flotilla-member-member-1"), "namespace flotilla-member-member-1 is a member's Work namespace on the hub"},
		{mf("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "clusterresourceplacements.placement.flotilla.io"), "it is one of the hub's own CustomResourceDefinitions"},
		{mf("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "memberclusters.cluster.flotilla.io"), "it is one of the hub's own CustomResourceDefinitions"},
		{mf("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "gadgets.example.com"), ""},
		{mf("rbac.authorization.k8s.io/v1", "ClusterRole", "", "flotilla-hub"), "it is the hub's own RBAC"},
		{mf("rbac.authorization.k8s.io/v1", "ClusterRole", "", "flotilla-hub-upsync"), "it is the hub's own RBAC"},
		{mf("rbac.authorization.k8s.io/v1", "ClusterRole", "", "flotilla-hubble"), ""},
		{mf("placement.flotilla.io/v1beta1", "Work", "team-a", "w"), "kind Work.placement.flotilla.io is written only by the hub's controllers"},
		{mf("placement.flotilla.io/v1beta1", "ClusterResourceBinding", "", "b"), "kind ClusterResourceBinding.placement.flotilla.io is written only by the hub's controllers"},
		{mf("placement.flotilla.io/v1beta1", "ClusterApprovalRequest", "", "run-1-canary"), "is written only by the hub's controllers"},
		{mf("cluster.flotilla.io/v1beta1", "MemberCluster", "", "fake"), "kind MemberCluster.cluster.flotilla.io is written only by the hub's controllers"},
		// What compound placements place: placements, overrides, envelopes.
		{mf("placement.flotilla.io/v1beta1", "ClusterResourcePlacement", "", "inner"), ""},
		{mf("placement.flotilla.io/v1beta1", "ResourcePlacement", "team-a", "inner"), ""},
		{mf("placement.flotilla.io/v1beta1", "ClusterResourceOverride", "", "o"), ""},
		{mf("cluster.flotilla.io/v1beta1", "Location", "", "eu"), ""},
	}
	for _, tt := range tests {
		got := a.denied(tt.m)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("denied(%s) = %q, want %q", tt.m.describe(), got, tt.want)
		}
	}
}

func TestReportedStatusIsTheObjectsStatusWithinBounds(t *testing.T) {
	obj := func(status any) *unstructured.Unstructured {
		o := map[string]any{"apiVersion": "v1", "kind": "X"}
		if status != nil {
			o["status"] = status
		}
		return &unstructured.Unstructured{Object: o}
	}
	if got := reportedStatus(obj(map[string]any{"ready": int64(2)})); got == nil || string(got.Raw) != `{"ready":2}` {
		t.Errorf("reportedStatus() = %v, want {\"ready\":2}", got)
	}
	if got := reportedStatus(obj(nil)); got != nil {
		t.Errorf("reportedStatus(no status) = %s, want nil", got.Raw)
	}
	if got := reportedStatus(obj(map[string]any{"big": strings.Repeat("x", maxReportedStatus)})); got != nil {
		t.Errorf("reportedStatus(too large) is set, want nil")
	}
}
