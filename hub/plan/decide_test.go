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

package plan

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	planv1beta1 "github.com/flotilla-io/flotilla/apis/plan/v1beta1"
	"github.com/flotilla-io/flotilla/hub/overrides"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins"
)

func pickAllWithLabel(k, v string) *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAll, Affinity: &placementv1beta1.Affinity{
		ClusterAffinity: &placementv1beta1.ClusterAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{
			ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}}}}}}}
}

func pickFixed(names ...string) *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixed, ClusterNames: names}
}

// decisions runs the real scheduler cycle (every built-in plugin) and
// classifies its result: cluster name → decision.
func decisions(t *testing.T, policy *placementv1beta1.PlacementPolicy, clusters []clusterv1beta1.MemberCluster, on ...string) map[string]planv1beta1.Decision {
	t.Helper()
	in := ft.Input(policy, clusters...)
	in.Bindings = ft.Bindings("test", on...)
	res, err := plugins.NewFramework(framework.Options{}).RunCycle(context.Background(), in)
	if err != nil {
		t.Fatalf("RunCycle: %v", err)
	}
	onSet := map[string]bool{}
	for _, c := range on {
		onSet[c] = true
	}
	got := map[string]planv1beta1.Decision{}
	for _, cp := range classify(res, onSet) {
		got[cp.Name] = cp.Decision
		if cp.Reason == "" && cp.Decision != planv1beta1.DecisionDropped {
			t.Errorf("cluster %s: %s without a reason", cp.Name, cp.Decision)
		}
	}
	return got
}

func TestClassify(t *testing.T) {
	fleet := []clusterv1beta1.MemberCluster{
		ft.Cluster("east-1", ft.Labels("env", "prod")),
		ft.Cluster("east-2", ft.Labels("env", "prod")),
		ft.Cluster("west-1", ft.Labels("env", "dev")),
	}
	tests := []struct {
		name   string
		policy *placementv1beta1.PlacementPolicy
		on     []string
		want   map[string]planv1beta1.Decision
	}{{
		name:   "a new placement selects the clusters its policy matches and no others",
		policy: pickAllWithLabel("env", "prod"),
		want: map[string]planv1beta1.Decision{"east-1": planv1beta1.DecisionSelected, "east-2": planv1beta1.DecisionSelected,
			"west-1": planv1beta1.DecisionNotSelected},
	}, {
		name:   "a policy edit keeps the clusters it still names, drops the one it no longer names and selects the new one",
		policy: pickFixed("east-2", "west-1"),
		on:     []string{"east-1", "east-2"},
		want: map[string]planv1beta1.Decision{"east-1": planv1beta1.DecisionDropped, "east-2": planv1beta1.DecisionKept,
			"west-1": planv1beta1.DecisionSelected},
	}, {
		name:   "a PickAll affinity edit drops the cluster that no longer matches and selects the one that now does",
		policy: pickAllWithLabel("env", "dev"),
		on:     []string{"east-1", "east-2"},
		want: map[string]planv1beta1.Decision{"east-1": planv1beta1.DecisionDropped, "east-2": planv1beta1.DecisionDropped,
			"west-1": planv1beta1.DecisionSelected},
	}, {
		name:   "an unchanged policy keeps every cluster",
		policy: pickAllWithLabel("env", "prod"),
		on:     []string{"east-1", "east-2"},
		want: map[string]planv1beta1.Decision{"east-1": planv1beta1.DecisionKept, "east-2": planv1beta1.DecisionKept,
			"west-1": planv1beta1.DecisionNotSelected},
	}, {
		name:   "a cluster the placement is on that is gone is dropped",
		policy: pickAllWithLabel("env", "prod"),
		on:     []string{"east-1", "gone-1"},
		want: map[string]planv1beta1.Decision{"east-1": planv1beta1.DecisionKept, "east-2": planv1beta1.DecisionSelected,
			"west-1": planv1beta1.DecisionNotSelected, "gone-1": planv1beta1.DecisionDropped},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, decisions(t, tc.policy, fleet, tc.on...)); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClassifyOrdersSelectedThenDroppedThenOthers(t *testing.T) {
	res := framework.CycleResult{
		Selected:   []string{"b"},
		Unschedule: []string{"c"},
		Decisions: []placementv1beta1.ClusterDecision{{ClusterName: "b", Selected: true, Reason: "picked"},
			{ClusterName: "a", Reason: "no match"}, {ClusterName: "c", Reason: "no longer named"}},
	}
	var got []string
	for _, cp := range classify(res, map[string]bool{"c": true}) {
		got = append(got, cp.Name+"="+string(cp.Decision))
	}
	if diff := cmp.Diff([]string{"b=Selected", "c=Dropped", "a=NotSelected"}, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func configMap(name, value string) []byte {
	return []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","namespace":"app"},"data":{"color":"` + value + `"}}`)
}

func colorOverride(snapshot, value string, cluster map[string]string) overrides.Override {
	v, _ := json.Marshal(value)
	return overrides.Override{Snapshot: snapshot, Name: snapshot, Namespace: "app",
		Selectors: []placementv1beta1.OverrideResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: "web"}},
		Rules: []placementv1beta1.OverrideRule{{
			ClusterSelector: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: cluster}}}},
			JSONPatchOverrides: []placementv1beta1.JSONPatchOverride{{Operator: placementv1beta1.JSONPatchOverrideOpReplace, Path: "/data/color",
				Value: &apiextensionsv1.JSON{Raw: v}}},
		}}}
}

func TestRenderAndCompare(t *testing.T) {
	key := pipeline.PlacementKey{Name: "web"}
	prod := ft.Cluster("east-1", ft.Labels("env", "prod"))
	dev := ft.Cluster("west-1", ft.Labels("env", "dev"))
	tests := []struct {
		name      string
		resources [][]byte
		overrides []overrides.Override
		cluster   *clusterv1beta1.MemberCluster
		have      [][]byte
		want      map[string]planv1beta1.Change
		applied   []string
		diffHas   string
	}{{
		name:      "a new placement creates every object on a cluster that has none",
		resources: [][]byte{configMap("web", "blue")},
		cluster:   &prod,
		want:      map[string]planv1beta1.Change{"ConfigMap app/web": planv1beta1.ChangeCreate},
	}, {
		name:      "an override edit that selects the cluster updates the object, with a diff of the field",
		resources: [][]byte{configMap("web", "blue")},
		overrides: []overrides.Override{colorOverride("proposed:color", "green", map[string]string{"env": "prod"})},
		cluster:   &prod,
		have:      [][]byte{configMap("web", "blue")},
		want:      map[string]planv1beta1.Change{"ConfigMap app/web": planv1beta1.ChangeUpdate},
		applied:   []string{"proposed:color"},
		diffHas:   "+  color: green",
	}, {
		name:      "an override edit that does not select the cluster leaves it unchanged",
		resources: [][]byte{configMap("web", "blue")},
		overrides: []overrides.Override{colorOverride("proposed:color", "green", map[string]string{"env": "prod"})},
		cluster:   &dev,
		have:      [][]byte{configMap("web", "blue")},
		want:      map[string]planv1beta1.Change{"ConfigMap app/web": planv1beta1.ChangeUnchanged},
	}, {
		name:      "an object the cluster gets now and would not is deleted",
		resources: [][]byte{configMap("web", "blue")},
		cluster:   &prod,
		have:      [][]byte{configMap("web", "blue"), configMap("old", "red")},
		want:      map[string]planv1beta1.Change{"ConfigMap app/web": planv1beta1.ChangeUnchanged, "ConfigMap app/old": planv1beta1.ChangeDelete},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, applied, err := render(tc.resources, tc.overrides, key, tc.cluster, nil)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if diff := cmp.Diff(tc.applied, applied); diff != "" {
				t.Errorf("applied overrides (-want +got):\n%s", diff)
			}
			ms, truncated, err := compare(out, tc.have)
			if err != nil || truncated {
				t.Fatalf("compare: %v, truncated %v", err, truncated)
			}
			got := map[string]planv1beta1.Change{}
			for _, m := range ms {
				got[describe(m.ResourceIdentifier)] = m.Change
				if m.Change == planv1beta1.ChangeUpdate && !strings.Contains(m.Diff, tc.diffHas) {
					t.Errorf("diff of %s lacks %q:\n%s", describe(m.ResourceIdentifier), tc.diffHas, m.Diff)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRenderReportsAnOverrideThatCannotApply(t *testing.T) {
	o := colorOverride("proposed:color", "green", map[string]string{"env": "prod"})
	o.Rules[0].JSONPatchOverrides[0].Path = "/data/missing/deeper"
	prod := ft.Cluster("east-1", ft.Labels("env", "prod"))
	_, _, err := render([][]byte{configMap("web", "blue")}, []overrides.Override{o}, pipeline.PlacementKey{Name: "web"}, &prod, nil)
	if err == nil || !strings.Contains(err.Error(), "proposed:color") {
		t.Fatalf("render = %v, want an error naming the override", err)
	}
}

func TestCompareTruncatesPastTheLimit(t *testing.T) {
	var want [][]byte
	for i := range planv1beta1.MaxManifestsPerCluster + 5 {
		want = append(want, configMap("cm-"+strings.Repeat("x", i%3)+string(rune('a'+i%26))+strconv.Itoa(i), "v"))
	}
	ms, truncated, err := compare(want, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !truncated || len(ms) != planv1beta1.MaxManifestsPerCluster {
		t.Errorf("compare kept %d manifests, truncated %v; want %d, true", len(ms), truncated, planv1beta1.MaxManifestsPerCluster)
	}
}

func TestStripProvenance(t *testing.T) {
	raw := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web","annotations":{"` + placementv1beta1.AnnotationPlacement + `":"ClusterResourcePlacement/web","` + placementv1beta1.AnnotationResourceIndex + `":"3"}}}`)
	if d, _ := diff(stripProvenance(raw), []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web"}}`)); d != "" {
		t.Errorf("a Work's manifest differs from the rendered one only by provenance, yet:\n%s", d)
	}
}

func TestWaves(t *testing.T) {
	plans := func(kv ...string) []planv1beta1.ClusterPlan {
		var out []planv1beta1.ClusterPlan
		for i := 0; i < len(kv); i += 2 {
			out = append(out, planv1beta1.ClusterPlan{Name: kv[i], Decision: planv1beta1.Decision(kv[i+1])})
		}
		return out
	}
	ready := func(cs ...string) map[string]current {
		m := map[string]current{}
		for _, c := range cs {
			m[c] = current{bound: true, ready: true}
		}
		return m
	}
	tests := []struct {
		name    string
		plans   []planv1beta1.ClusterPlan
		now     map[string]current
		changed map[string]bool
		cfg     *placementv1beta1.RollingUpdateConfig
		want    []planv1beta1.Wave
	}{{
		name:  "a new placement binds every selected cluster in one wave (nothing to take down)",
		plans: plans("a", "Selected", "b", "Selected", "c", "NotSelected"),
		want:  []planv1beta1.Wave{{Bind: []string{"a", "b"}}},
	}, {
		name:    "an update of four clusters with maxUnavailable 1 goes one cluster a wave",
		plans:   plans("a", "Kept", "b", "Kept", "c", "Kept", "d", "Kept"),
		now:     ready("a", "b", "c", "d"),
		changed: map[string]bool{"a": true, "b": true, "c": true, "d": true},
		cfg:     &placementv1beta1.RollingUpdateConfig{MaxUnavailable: ptr.To(intstr.FromInt(1))},
		want:    []planv1beta1.Wave{{Update: []string{"a"}}, {Update: []string{"b"}}, {Update: []string{"c"}}, {Update: []string{"d"}}},
	}, {
		name:    "clusters whose content does not change are in no wave",
		plans:   plans("a", "Kept", "b", "Kept"),
		now:     ready("a", "b"),
		changed: map[string]bool{"b": true},
		want:    []planv1beta1.Wave{{Update: []string{"b"}}},
	}, {
		name:  "a policy edit binds the new cluster and removes the dropped one",
		plans: plans("b", "Kept", "c", "Selected", "a", "Dropped"),
		now:   ready("a", "b"),
		cfg:   &placementv1beta1.RollingUpdateConfig{MaxUnavailable: ptr.To(intstr.FromInt(1)), MaxSurge: ptr.To(intstr.FromInt(1))},
		want:  []planv1beta1.Wave{{Bind: []string{"c"}, Remove: []string{"a"}}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := waves(tc.plans, tc.now, tc.changed, tc.cfg, nil)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("waves (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	secret := placementv1beta1.ResourceIdentifier{Version: "v1", Kind: "Secret", Namespace: "app", Name: "db"}
	cm := placementv1beta1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "app", Name: "web"}
	st := &planv1beta1.PlacementPlanStatus{Clusters: []planv1beta1.ClusterPlan{
		{Name: "a", Manifests: []planv1beta1.PlannedManifest{{ResourceIdentifier: secret, Object: rawOf(`{}`), Diff: "x"}, {ResourceIdentifier: cm, Object: rawOf(`{}`)}}},
		{Name: "b", Manifests: []planv1beta1.PlannedManifest{{ResourceIdentifier: secret, Object: rawOf(`{}`)}}},
	}}
	asked := 0
	Redact(st, func(id placementv1beta1.ResourceIdentifier) (bool, string) {
		asked++
		return id.Kind != "Secret", "secrets are not yours"
	})
	if asked != 2 {
		t.Errorf("asked %d times, want once per object (2)", asked)
	}
	for _, c := range st.Clusters {
		for _, m := range c.Manifests {
			hidden := m.Object == nil && m.Diff == "" && m.Forbidden != ""
			if (m.Kind == "Secret") != hidden {
				t.Errorf("cluster %s, %s: object %v, diff %q, forbidden %q", c.Name, describe(m.ResourceIdentifier), m.Object, m.Diff, m.Forbidden)
			}
		}
	}
}

func rawOf(s string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(s)} }

func TestCompareWithMember(t *testing.T) {
	planned := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"app","labels":{"app":"web"}},` +
		`"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}}}`
	tests := []struct {
		name     string
		live     string
		want     planv1beta1.MemberState
		diffHas  string
		diffLack string
	}{{
		name: "what the member's API server adds does not count",
		live: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"app","uid":"u-1","resourceVersion":"9",` +
			`"labels":{"app":"web"},"annotations":{"placement.flotilla.io/work":"web-work"}},` +
			`"spec":{"replicas":2,"progressDeadlineSeconds":600,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27","imagePullPolicy":"IfNotPresent"}]}}},` +
			`"status":{"replicas":2}}`,
		want: planv1beta1.MemberSame,
	}, {
		name: "a field the plan sets with another value on the member differs, and the diff shows only it and its context",
		live: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"app","labels":{"app":"web"}},` +
			`"spec":{"replicas":5,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27","imagePullPolicy":"IfNotPresent"}]}}},"status":{"replicas":5}}`,
		want:     planv1beta1.MemberDiffers,
		diffHas:  "-  replicas: 5\n+  replicas: 2",
		diffLack: "imagePullPolicy",
	}, {
		name:    "a container added on the member differs",
		live:    `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"app","labels":{"app":"web"}},"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27"},{"name":"sidecar","image":"envoy"}]}}}}`,
		want:    planv1beta1.MemberDiffers,
		diffHas: "sidecar",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, d, err := CompareWithMember([]byte(planned), []byte(tc.live))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("state %s, want %s; diff:\n%s", got, tc.want, d)
			}
			if !strings.Contains(d, tc.diffHas) || (tc.diffLack != "" && strings.Contains(d, tc.diffLack)) {
				t.Errorf("diff has not %q or has %q:\n%s", tc.diffHas, tc.diffLack, d)
			}
		})
	}
}
