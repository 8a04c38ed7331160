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

package proxy

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	planv1beta1 "github.com/flotilla-io/flotilla/apis/plan/v1beta1"
	"github.com/flotilla-io/flotilla/hub/plan"
	"github.com/flotilla-io/flotilla/hub/resources"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// userAuth authenticates every request as the user in header X-Test-User.
type userAuth struct{}

func (userAuth) Authenticate(r *http.Request) (Identity, error) {
	return Identity{User: r.Header.Get("X-Test-User")}, nil
}

// TestPlanAgainstARealAPIServer serves plans with the real planner reading
// a real API server, and real SubjectAccessReviews: carol may create plans
// and get the ConfigMaps of namespace plan-app but not its Secrets; dave may
// not create plans.
func TestPlanAgainstARealAPIServer(t *testing.T) {
	ctx := t.Context()
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "plan-app"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "plan-app"}, Data: map[string]string{"color": "blue"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "plan-app"}, StringData: map[string]string{"password": "hunter2"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "plan-create"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{planv1beta1.Group}, Resources: []string{planv1beta1.Resource}, Verbs: []string{"create"}},
			{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}},
		}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "plan-create"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "plan-create"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "carol"}}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "read-configmaps", Namespace: "plan-app"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "carol", Namespace: "plan-app"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read-configmaps"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "carol"}}},
	} {
		testenv.Create(t, env.Client, o)
	}
	testenv.ReadyMember(t, env.Client, "plan-prod-1", map[string]string{"env": "prod"})
	testenv.ReadyMember(t, env.Client, "plan-dev-1", map[string]string{"env": "dev"})

	watcher, err := resources.NewWatcher(env.Config, logr.Discard(), resources.Options{})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = watcher.Start(ctx) }()
	planner := &plan.Planner{Reader: env.Client, Resources: watcher, Framework: plugins.NewFramework(framework.Options{})}
	h, err := New(Options{Dialer: blockingDialer{}, Authenticator: userAuth{}, Authorizer: fixedAuth{},
		Plan: PlanOptions{Planner: planner, Authorizer: SubjectAccessReviewer{Client: env.Client}, Mapper: env.Client.RESTMapper()}})
	if err != nil {
		t.Fatal(err)
	}
	crp := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "plan-web"}, Spec: placementv1beta1.PlacementSpec{
		ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "plan-app"}},
		Policy: &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAll, Affinity: &placementv1beta1.Affinity{
			ClusterAffinity: &placementv1beta1.ClusterAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{
				ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}}}}}},
	}}
	post := func(user string, body []byte) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, planPath, bytes.NewReader(body))
		req.Header.Set("X-Test-User", user)
		h.ServeHTTP(rec, req)
		return rec
	}
	body, _ := json.Marshal(&planv1beta1.PlacementPlan{Spec: planv1beta1.PlacementPlanSpec{ClusterResourcePlacement: crp}})

	t.Run("a user who may not create plans is refused", func(t *testing.T) {
		if rec := post("dave", body); rec.Code != http.StatusForbidden {
			t.Errorf("status %d, want 403: %s", rec.Code, rec.Body)
		}
	})
	t.Run("a body over the limit is refused with 413 and says why", func(t *testing.T) {
		big := bytes.Repeat([]byte(" "), planv1beta1.MaxRequestBytes+1)
		rec := post("carol", big)
		if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "plan fewer objects") {
			t.Errorf("status %d, want 413 with a reason: %s", rec.Code, rec.Body)
		}
	})
	t.Run("a plan without a placement is the user's to fix (422)", func(t *testing.T) {
		rec := post("carol", []byte(`{"spec":{}}`))
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "names no placement") {
			t.Errorf("status %d, want 422: %s", rec.Code, rec.Body)
		}
	})
	t.Run("a new placement is planned on the matching cluster, hiding what the user may not read", func(t *testing.T) {
		rec := post("carol", body)
		if rec.Code != http.StatusCreated {
			t.Fatalf("status %d, want 201: %s", rec.Code, rec.Body)
		}
		got := &planv1beta1.PlacementPlan{}
		if err := json.Unmarshal(rec.Body.Bytes(), got); err != nil {
			t.Fatal(err)
		}
		decisions := map[string]planv1beta1.Decision{}
		var prod *planv1beta1.ClusterPlan
		for i, c := range got.Status.Clusters {
			decisions[c.Name] = c.Decision
			if c.Name == "plan-prod-1" {
				prod = &got.Status.Clusters[i]
			}
		}
		if decisions["plan-prod-1"] != planv1beta1.DecisionSelected || decisions["plan-dev-1"] != planv1beta1.DecisionNotSelected {
			t.Fatalf("decisions %v, want plan-prod-1 Selected and plan-dev-1 NotSelected", decisions)
		}
		seen := map[string]bool{}
		for _, m := range prod.Manifests {
			seen[m.Kind] = true
			if m.Change != planv1beta1.ChangeCreate {
				t.Errorf("%s %s: change %s, want Create", m.Kind, m.Name, m.Change)
			}
			switch m.Kind {
			case "Secret":
				if m.Object != nil || m.Forbidden == "" || strings.Contains(rec.Body.String(), "aHVudGVyMg") {
					t.Errorf("the Secret is shown to a user who may not get it: object %s, forbidden %q", m.Object, m.Forbidden)
				}
			case "ConfigMap":
				if m.Object == nil || !strings.Contains(string(m.Object.Raw), "blue") {
					t.Errorf("the ConfigMap is not shown: %+v", m)
				}
			}
		}
		if !seen["Secret"] || !seen["ConfigMap"] {
			t.Errorf("manifests of plan-prod-1 are %v, want the ConfigMap and the Secret", seen)
		}
		if w := got.Status.Rollout; w == nil || len(w.Waves) != 1 || len(w.Waves[0].Bind) != 1 {
			t.Errorf("rollout %+v, want one wave binding plan-prod-1", w)
		}
		var crps placementv1beta1.ClusterResourcePlacementList
		if err := env.Client.List(ctx, &crps); err != nil || len(crps.Items) != 0 {
			t.Errorf("the plan wrote placements: %v, %v", crps.Items, err)
		}
	})
}
