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

package cli

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func TestParseObjectArgAndMatch(t *testing.T) {
	deployment := manifestHead{APIVersion: "apps/v1", Kind: "Deployment"}
	deployment.Metadata.Name, deployment.Metadata.Namespace = "web", "prod"
	tests := []struct {
		name      string
		arg       string
		namespace string // "" for no -n
		resource  string // the agent's report of the manifest's resource
		wantErr   bool
		want      bool
	}{
		{name: "a kind in lower case matches", arg: "deployment/web", want: true},
		{name: "a kind as written matches", arg: "Deployment/web", want: true},
		{name: "the plural resource matches without a report", arg: "deployments/web", want: true},
		{name: "the kind with its group matches", arg: "deployment.apps/web", want: true},
		{name: "the kind with another group does not match", arg: "deployment.extensions/web", want: false},
		{name: "the resource the agent reported matches", arg: "deploys/web", resource: "deploys", want: true},
		{name: "another name does not match", arg: "deployment/api", want: false},
		{name: "the object's namespace matches", arg: "deployment/web", namespace: "prod", want: true},
		{name: "another namespace does not match", arg: "deployment/web", namespace: "dev", want: false},
		{name: "an argument without a slash is refused", arg: "deployment", wantErr: true},
		{name: "an argument without a name is refused", arg: "deployment/", wantErr: true},
		{name: "an argument with two slashes is refused", arg: "deployment/prod/web", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseObjectArg(tt.arg)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseObjectArg(%q) error = %v, want error %v", tt.arg, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			o.namespace, o.namespaced = tt.namespace, tt.namespace != ""
			if got := o.matches(deployment, "apps", tt.resource); got != tt.want {
				t.Errorf("matches() = %v, want %v", got, tt.want)
			}
		})
	}
}

// createWork creates a Work in a member's namespace with the given manifests
// and, if not nil, the agent's status.
func createWork(t *testing.T, cluster, name string, labels map[string]string, status *placementv1beta1.WorkStatus, objs ...map[string]any) {
	t.Helper()
	ctx := context.Background()
	w := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: clusterv1beta1.MemberNamespace(cluster), Labels: labels}}
	for _, o := range objs {
		raw, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, placementv1beta1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	if err := env.Client.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	if status != nil {
		w.Status = *status
		if err := env.Client.Status().Update(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
}

func object(apiVersion, kind, namespace, name string, annotations map[string]any) map[string]any {
	md := map[string]any{"name": name}
	if namespace != "" {
		md["namespace"] = namespace
	}
	if annotations != nil {
		md["annotations"] = annotations
	}
	return map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": md}
}

// Runs after TestGoldenOutputs (file order): its member clusters are not in
// the fleet that test schedules over.
func TestWhoPlacedAnswersFromTheWorksOfTheMember(t *testing.T) {
	ctx := context.Background()
	const cluster = "placed-1"
	if err := env.Client.Create(ctx, &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: clusterv1beta1.MemberNamespace(cluster)}}); err != nil {
		t.Fatal(err)
	}
	provenance := func(placement, index string) map[string]any {
		return map[string]any{
			placementv1beta1.AnnotationHub: "flotilla-hub", placementv1beta1.AnnotationPlacement: placement,
			placementv1beta1.AnnotationResourceIndex: index,
		}
	}
	// web's Work: the Deployment applied, not available yet.
	createWork(t, cluster, "web-work", map[string]string{placementv1beta1.LabelPlacementName: "web"},
		&placementv1beta1.WorkStatus{ManifestConditions: []placementv1beta1.ManifestCondition{{
			Identifier: placementv1beta1.WorkResourceIdentifier{Ordinal: 1, Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespace: "web", Name: "web"},
			Conditions: []metav1.Condition{
				cond(placementv1beta1.ConditionApplied, metav1.ConditionTrue, placementv1beta1.ReasonApplied, "", 1),
				cond(placementv1beta1.ConditionAvailable, metav1.ConditionFalse, placementv1beta1.ReasonNotAvailableYet, "1/3 replicas available", 1),
			},
		}}},
		object("v1", "Namespace", "", "web", provenance("ClusterResourcePlacement/web", "3")),
		object("apps/v1", "Deployment", "web", "web", provenance("ClusterResourcePlacement/web", "3")),
	)
	// A Work an older hub wrote (no provenance annotations) lists the Deployment too.
	createWork(t, cluster, "web-canary-work", map[string]string{placementv1beta1.LabelPlacementName: "web-canary"}, nil,
		object("apps/v1", "Deployment", "web", "web", nil),
	)
	// A ResourcePlacement's Work the agent has not reported on yet.
	createWork(t, cluster, "team-a.api-0123456789", map[string]string{placementv1beta1.LabelPlacementName: "api", placementv1beta1.LabelPlacementNamespace: "team-a"}, nil,
		object("v1", "ConfigMap", "team-a", "api", provenance("ResourcePlacement/team-a/api", "0")),
	)

	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"who-placed-deployment-two-works", []string{"who-placed", "deployments.apps/web", "-n", "web", "--cluster", cluster}},
		{"who-placed-configmap-any-namespace", []string{"who-placed", "configmap/api", "--cluster", cluster}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			out, err := runCommand(t, tc.args...)
			if err != nil {
				t.Fatalf("%v: %v\n%s", tc.args, err, out)
			}
			golden(t, tc.golden, out)
		})
	}

	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{
			name:    "an object no Work lists is an error",
			args:    []string{"who-placed", "configmap/api", "-n", "team-b", "--cluster", cluster},
			wantErr: "no placement puts configmap team-b/api on member cluster placed-1: no Work in flotilla-member-placed-1 lists it",
		},
		{
			name:    "a cluster that does not exist is an error",
			args:    []string{"who-placed", "configmap/api", "--cluster", "nowhere"},
			wantErr: "there is no member cluster nowhere",
		},
		{
			name:    "the cluster is required",
			args:    []string{"who-placed", "configmap/api"},
			wantErr: "--cluster is required: the member cluster the object is on",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runCommand(t, tc.args...)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}
