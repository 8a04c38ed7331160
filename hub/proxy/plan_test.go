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
	"github.com/flotilla-io/flotilla/pkg/apiproxy"
	"github.com/flotilla-io/flotilla/pkg/testenv"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// userAuth authenticates every request as the user in header X-Test-User.
type userAuth struct{}

func (userAuth) Authenticate(r *http.Request) (Identity, error) {
	return Identity{User: r.Header.Get("X-Test-User")}, nil
}

// TestPlanAgainstRealAPIServers serves plans with the real planner reading a
// real hub API server (with Flotilla's CRDs), real SubjectAccessReviews
// there, and a member (the package's env, reached through a real tunnel
// and agent): carol may create plans and get the ConfigMaps of namespace
// plan-app on the hub but not its Secrets; dave may not create plans. On
// the member, carol (as flotilla:hub:carol) may get those ConfigMaps.
func TestPlanAgainstRealAPIServers(t *testing.T) {
	ctx := t.Context()
	hubEnv, err := testenv.Start(testenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hubEnv.Stop() })
	readConfigMaps := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "plan-app"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "plan-app"}, Data: map[string]string{"color": "blue"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "plan-app"}, StringData: map[string]string{"password": "hunter2"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "plan-create"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{planv1beta1.Group}, Resources: []string{planv1beta1.Resource}, Verbs: []string{"create"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "plan-create"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "plan-create"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "carol"}}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "read-configmaps", Namespace: "plan-app"}, Rules: readConfigMaps},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "carol", Namespace: "plan-app"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read-configmaps"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "carol"}}},
	} {
		testenv.Create(t, hubEnv.Client, o)
	}
	testenv.ReadyMember(t, hubEnv.Client, "plan-prod-1", map[string]string{"env": "prod"})
	testenv.ReadyMember(t, hubEnv.Client, "plan-dev-1", map[string]string{"env": "dev"})
	// The member holds the ConfigMap already, red.
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "plan-app"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "plan-app"}, Data: map[string]string{"color": "red"}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "read-configmaps", Namespace: "plan-app"}, Rules: readConfigMaps},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "hub-carol", Namespace: "plan-app"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read-configmaps"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: apiproxy.DefaultIdentityPrefix + "carol"}}},
	} {
		testenv.Create(t, env.Client, o)
	}
	d := &sessions{m: map[string]*tunnel.ServerSession{}}
	connectAgent(t, d, "plan-prod-1", true)

	watcher, err := resources.NewWatcher(hubEnv.Config, logr.Discard(), resources.Options{})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = watcher.Start(ctx) }()
	planner := &plan.Planner{Reader: hubEnv.Client, Resources: watcher, Framework: plugins.NewFramework(framework.Options{})}
	h, err := New(Options{Dialer: d, Authenticator: userAuth{}, Authorizer: fixedAuth{},
		Plan: PlanOptions{Planner: planner, Authorizer: SubjectAccessReviewer{Client: hubEnv.Client}, Mapper: hubEnv.Client.RESTMapper()}})
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
				if m.Object != nil || m.Forbidden == "" || m.Member != "" || strings.Contains(rec.Body.String(), "aHVudGVyMg") {
					t.Errorf("the Secret is shown to a user who may not get it: object %s, forbidden %q", m.Object, m.Forbidden)
				}
			case "ConfigMap":
				if m.Object == nil || !strings.Contains(string(m.Object.Raw), "blue") {
					t.Errorf("the ConfigMap is not shown: %+v", m)
				}
				if m.Member != planv1beta1.MemberDiffers || !strings.Contains(m.MemberDiff, "-  color: red\n+  color: blue") {
					t.Errorf("the ConfigMap compares with the member's as %s:\n%s\nwant Differs, red to blue", m.Member, m.MemberDiff)
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
		if err := hubEnv.Client.List(ctx, &crps); err != nil || len(crps.Items) != 0 {
			t.Errorf("the plan wrote placements: %v, %v", crps.Items, err)
		}
	})
}
