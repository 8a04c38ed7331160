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
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/poll"
)

// startConsole serves the console as the user of cfg on a test server.
func startConsole(t *testing.T, cfg *rest.Config) *httptest.Server {
	t.Helper()
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	s, err := newConsole(c, dynamic.NewForConfigOrDie(cfg), srv.Listener.Addr().String(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	s.token = "test-token"
	s.live = 50 * time.Millisecond
	srv.Config.Handler = s.handler()
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// get fetches a page and returns its status and body, ages normalized.
func get(t *testing.T, srv *httptest.Server, path string) (int, string) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, normalizeAges(string(body))
}

// post submits a form with the console's token.
func post(t *testing.T, srv *httptest.Server, path string, form url.Values) (int, string) {
	t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if !form.Has("token") {
		form.Set("token", "test-token")
	}
	resp, err := srv.Client().PostForm(srv.URL+path, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

var rfc3339 = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

func normalizeAges(s string) string {
	return rfc3339.ReplaceAllString(ages.ReplaceAllString(s, "<age> ago"), "<time>")
}

// consoleFleet makes the console tests' fleet: three clusters labelled
// console=golden (a healthy one, a disconnected one, a cordoned one), a
// ClusterResourcePlacement Available on the first and with a staged update
// run waiting for approval, one that failed on the first and waits in its
// rollout on the third, and a ResourcePlacement that drifted.
func consoleFleet(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	golden := map[string]string{"console": "golden"}
	memberCluster(t, "console-a", golden, nil, metav1.ConditionTrue, metav1.ConditionTrue)
	memberCluster(t, "console-b", golden, nil, metav1.ConditionFalse, metav1.ConditionUnknown)
	memberCluster(t, "console-c", golden, []clusterv1beta1.Taint{{Key: clusterv1beta1.TaintCordoned, Effect: clusterv1beta1.TaintEffectNoSchedule}}, metav1.ConditionTrue, metav1.ConditionTrue)

	all := func(gen int64) []metav1.Condition {
		var out []metav1.Condition
		for _, typ := range placementv1beta1.PerClusterConditionTypes() {
			out = append(out, cond(typ, metav1.ConditionTrue, "Done", typ+" on every manifest", gen))
		}
		return out
	}
	deploy := placementv1beta1.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Name: "api", Namespace: "api"}
	cm := placementv1beta1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Name: "cache-settings", Namespace: "console-team"}
	for _, p := range []struct {
		obj      placementv1beta1.PlacementObj
		statuses func(gen int64) []placementv1beta1.PerClusterPlacementStatus
	}{
		{
			&placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "console-web", Labels: golden}},
			func(gen int64) []placementv1beta1.PerClusterPlacementStatus {
				return []placementv1beta1.PerClusterPlacementStatus{{ClusterName: "console-a", Conditions: all(gen)}}
			},
		},
		{
			&placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "console-api", Labels: golden}},
			func(gen int64) []placementv1beta1.PerClusterPlacementStatus {
				return []placementv1beta1.PerClusterPlacementStatus{
					{ClusterName: "console-a", Conditions: []metav1.Condition{
						cond(placementv1beta1.ConditionScheduled, metav1.ConditionTrue, "Scheduled", "picked", gen),
						cond(placementv1beta1.ConditionApplied, metav1.ConditionFalse, placementv1beta1.ReasonApplyFailed, "1 of 2 manifests failed to apply", gen),
					}, FailedPlacements: []placementv1beta1.FailedResourcePlacement{{ResourceIdentifier: deploy,
						Condition: cond(placementv1beta1.ConditionApplied, metav1.ConditionFalse, placementv1beta1.ReasonApplyFailed, "spec.replicas: must be at least 0", gen)}}},
					{ClusterName: "console-c", Conditions: []metav1.Condition{
						cond(placementv1beta1.ConditionScheduled, metav1.ConditionTrue, "Scheduled", "picked", gen),
						cond(placementv1beta1.ConditionRolloutStarted, metav1.ConditionFalse, "RolloutNotStartedYet", "waiting for stage prod", gen),
					}},
				}
			},
		},
		{
			&placementv1beta1.ResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "console-cache", Namespace: "console-team", Labels: golden}},
			func(gen int64) []placementv1beta1.PerClusterPlacementStatus {
				return []placementv1beta1.PerClusterPlacementStatus{{ClusterName: "console-a", Conditions: all(gen),
					DriftedPlacements: []placementv1beta1.DriftedResourcePlacement{{ResourceIdentifier: cm, ObservedDrifts: []placementv1beta1.PatchDetail{{Path: "/data/size", ValueInMember: "10", ValueInHub: "20"}}}}}}
			},
		},
	} {
		if p.obj.GetNamespace() != "" {
			if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.obj.GetNamespace()}}); err != nil {
				t.Fatal(err)
			}
		}
		p.obj.GetPlacementSpec().ResourceSelectors = []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: "x"}}
		if p.obj.GetNamespace() == "" {
			p.obj.GetPlacementSpec().ResourceSelectors = []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: p.obj.GetName()}}
		}
		if err := env.Client.Create(ctx, p.obj); err != nil {
			t.Fatal(err)
		}
		st := p.obj.GetPlacementStatus()
		st.PlacementStatuses = p.statuses(p.obj.GetGeneration())
		st.SelectedResources = []placementv1beta1.ResourceIdentifier{deploy}
		if err := env.Client.Status().Update(ctx, p.obj); err != nil {
			t.Fatal(err)
		}
	}

	run := &placementv1beta1.ClusterStagedUpdateRun{
		ObjectMeta: metav1.ObjectMeta{Name: "console-run"},
		Spec:       placementv1beta1.StagedUpdateRunSpec{PlacementName: "console-web", ResourceSnapshotIndex: "1", StagedUpdateStrategyName: "two-stages"},
	}
	if err := env.Client.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	start := metav1.NewTime(time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC))
	run.Status.StagesStatus = []placementv1beta1.StageUpdatingStatus{{
		StageName: "canary", StartTime: &start,
		Clusters:             []placementv1beta1.ClusterUpdatingStatus{{ClusterName: "console-a", ResourceSnapshotIndex: "1"}},
		AfterStageTaskStatus: []placementv1beta1.AfterStageTaskStatus{{Type: placementv1beta1.AfterStageTaskTypeApproval, ApprovalRequestName: "console-run-canary"}},
	}, {StageName: "prod"}}
	if err := env.Client.Status().Update(ctx, run); err != nil {
		t.Fatal(err)
	}
	req := &placementv1beta1.ClusterApprovalRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "console-run-canary", Labels: map[string]string{placementv1beta1.LabelUpdateRun: "console-run", placementv1beta1.LabelStage: "canary"}},
		Spec:       placementv1beta1.ApprovalRequestSpec{ParentStageRollout: "console-run", TargetStage: "canary"},
	}
	if err := env.Client.Create(ctx, req); err != nil {
		t.Fatal(err)
	}
}

// grantReader lets user get, list and watch what the console reads, and nothing else.
func grantReader(t *testing.T, user string) {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "console-reader"},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{placementv1beta1.GroupVersion.Group, clusterv1beta1.GroupVersion.Group},
			Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"},
		}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "console-reader-" + user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	for _, o := range []client.Object{role, binding} {
		if err := env.Client.Create(ctx, o); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
}

func TestConsole(t *testing.T) {
	ctx := context.Background()
	consoleFleet(t)
	admin := startConsole(t, env.Config)
	const filter = "?label=console%3Dgolden&clusters=console%3Dgolden"

	for _, tc := range []struct{ golden, path string }{
		{"console-fleet", "/" + filter},
		{"console-matrix", "/matrix" + filter},
		{"console-failed-only", "/matrix" + filter + "&state=Failed"},
		{"console-placement-web", "/placements/console-web"},
		{"console-placement-cache", "/namespaces/console-team/placements/console-cache"},
		{"console-cluster-a", "/clusters/console-a"},
		{"console-confirm-uncordon", "/clusters/console-c/uncordon"},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			code, body := get(t, admin, tc.path)
			if code != http.StatusOK {
				t.Fatalf("GET %s = %d:\n%s", tc.path, code, body)
			}
			golden(t, tc.golden, body)
		})
	}

	t.Run("a failing cell leads to its reason", func(t *testing.T) {
		_, matrix := get(t, admin, "/matrix"+filter)
		link := regexp.MustCompile(`<td class="s-failed"><a href="([^"]+)"`).FindStringSubmatch(matrix)
		if link == nil {
			t.Fatalf("no failed cell in the matrix:\n%s", matrix)
		}
		page, anchor, _ := strings.Cut(link[1], "#")
		_, body := get(t, admin, page)
		want := `<li id="` + anchor + `">`
		if !strings.Contains(body, want) || !strings.Contains(body, "spec.replicas: must be at least 0") {
			t.Errorf("the failed cell's page %s has no %s with the failure:\n%s", link[1], want, body)
		}
	})

	t.Run("a cluster the placement is not on explains why", func(t *testing.T) {
		code, body := get(t, admin, "/placements/console-web/why/console-b")
		if code != http.StatusOK || !strings.Contains(body, "Why is ClusterResourcePlacement console-web (not) on console-b?") {
			t.Errorf("why page = %d:\n%s", code, body)
		}
	})

	t.Run("a bad filter is refused with its reason", func(t *testing.T) {
		code, body := get(t, admin, "/?state=Sideways")
		if code != http.StatusBadRequest || !strings.Contains(body, `the state filter &#34;Sideways&#34; is not one of`) {
			t.Errorf("GET /?state=Sideways = %d:\n%s", code, body)
		}
	})

	t.Run("a placement that does not exist is a 404 that says so", func(t *testing.T) {
		code, body := get(t, admin, "/placements/nope")
		if code != http.StatusNotFound || !strings.Contains(body, "ClusterResourcePlacement nope not found") {
			t.Errorf("GET /placements/nope = %d:\n%s", code, body)
		}
	})

	t.Run("a post without the form token is refused", func(t *testing.T) {
		code, _ := post(t, admin, "/approvals/console-run-canary", url.Values{"token": {"guess"}})
		if code != http.StatusForbidden {
			t.Errorf("POST without the token = %d, want 403", code)
		}
	})

	t.Run("a request for another host is refused", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodGet, admin.URL+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "evil.example:80"
		resp, err := admin.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("GET with Host evil.example = %d, want 421", resp.StatusCode)
		}
	})

	viewerCfg, err := env.AddUser("console-viewer")
	if err != nil {
		t.Fatal(err)
	}
	grantReader(t, "console-viewer")
	viewer := startConsole(t, viewerCfg)

	t.Run("a user who may read sees the fleet", func(t *testing.T) {
		// RBAC takes a moment to reach the authorizer's cache.
		poll.Eventually(t, 10*time.Second, 100*time.Millisecond, func() error {
			code, body := get(t, viewer, "/"+filter)
			if code != http.StatusOK || !strings.Contains(body, "console-web") {
				return fmt.Errorf("GET / as a viewer = %d:\n%s", code, body)
			}
			return nil
		})
	})

	t.Run("a user without the right to approve is refused with the hub's reason", func(t *testing.T) {
		code, body := post(t, viewer, "/approvals/console-run-canary", url.Values{"back": {"/placements/console-web"}})
		if code != http.StatusForbidden || !strings.Contains(body, "Refused") || !strings.Contains(body, `User &#34;console-viewer&#34; cannot update resource &#34;clusterapprovalrequests/status&#34;`) {
			t.Errorf("POST approve as a viewer = %d:\n%s", code, body)
		}
		got := &placementv1beta1.ClusterApprovalRequest{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: "console-run-canary"}, got); err != nil {
			t.Fatal(err)
		}
		if conditions.IsTrue(got.Status.Conditions, conditionApproved) {
			t.Errorf("a refused approval approved the request: %+v", got.Status.Conditions)
		}
	})

	t.Run("a user who may not list the fleet is told so, and the page still renders", func(t *testing.T) {
		noneCfg, err := env.AddUser("console-nobody")
		if err != nil {
			t.Fatal(err)
		}
		code, body := get(t, startConsole(t, noneCfg), "/")
		if code != http.StatusOK || !strings.Contains(body, "You may not list ClusterResourcePlacements") || !strings.Contains(body, "You may not list MemberClusters") {
			t.Errorf("GET / as a user without rights = %d:\n%s", code, body)
		}
	})

	t.Run("approving a waiting stage from the placement page approves it", func(t *testing.T) {
		_, page := get(t, admin, "/placements/console-web")
		if !strings.Contains(page, `action="/approvals/console-run-canary"`) {
			t.Fatalf("the placement page has no Approve button:\n%s", page)
		}
		code, body := post(t, admin, "/approvals/console-run-canary", url.Values{"back": {"/placements/console-web"}})
		if code != http.StatusOK || !strings.Contains(body, "ClusterApprovalRequest console-run-canary approved: update run console-run may go on after stage canary") {
			t.Fatalf("POST approve = %d:\n%s", code, body)
		}
		got := &placementv1beta1.ClusterApprovalRequest{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: "console-run-canary"}, got); err != nil {
			t.Fatal(err)
		}
		if !conditions.IsTrue(got.Status.Conditions, conditionApproved) {
			t.Errorf("the request is not approved: %+v", got.Status.Conditions)
		}
		_, page = get(t, admin, "/placements/console-web")
		if !strings.Contains(page, "Approval console-run-canary: approved.") {
			t.Errorf("the placement page does not say the stage is approved:\n%s", page)
		}
	})

	t.Run("cordon and uncordon change the taint, with a confirmation first", func(t *testing.T) {
		code, body := post(t, admin, "/clusters/console-a/cordon", nil)
		if code != http.StatusOK || !strings.Contains(body, "member cluster console-a cordoned") {
			t.Fatalf("POST cordon = %d:\n%s", code, body)
		}
		mc := &clusterv1beta1.MemberCluster{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: "console-a"}, mc); err != nil {
			t.Fatal(err)
		}
		if len(mc.Spec.Taints) != 1 || !isCordonTaint(mc.Spec.Taints[0]) {
			t.Errorf("taints after cordon = %+v", mc.Spec.Taints)
		}
		if _, page := get(t, admin, "/clusters/console-a"); !strings.Contains(page, `href="/clusters/console-a/uncordon">Uncordon…</a>`) {
			t.Errorf("a cordoned cluster's page offers no uncordon:\n%s", page)
		}
		if code, body := post(t, admin, "/clusters/console-a/uncordon", nil); code != http.StatusOK || !strings.Contains(body, "uncordoned") {
			t.Fatalf("POST uncordon = %d:\n%s", code, body)
		}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: "console-a"}, mc); err != nil {
			t.Fatal(err)
		}
		if len(mc.Spec.Taints) != 0 {
			t.Errorf("taints after uncordon = %+v", mc.Spec.Taints)
		}
		if code, _ := post(t, admin, "/clusters/console-a/explode", nil); code != http.StatusNotFound {
			t.Errorf("POST an unknown action = %d, want 404", code)
		}
	})

	t.Run("the page is told when the fleet changes", func(t *testing.T) {
		lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(lctx, http.MethodGet, admin.URL+"/live", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := admin.Client().Do(req) //nolint:bodyclose // closed below; a goroutine reads it
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type = %q", ct)
		}
		lines := make(chan string)
		go func() {
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// The watches' first events are the objects that exist: drain them,
		// then change a placement and wait for one more.
		for drained := false; !drained; {
			select {
			case <-lines:
			case <-time.After(time.Second):
				drained = true
			case <-lctx.Done():
				t.Fatal("the event stream ended")
			}
		}
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: "console-web"}, crp); err != nil {
			t.Fatal(err)
		}
		crp.Labels["touched"] = "yes"
		if err := env.Client.Update(ctx, crp); err != nil {
			t.Fatal(err)
		}
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatal("the event stream ended before a change")
				}
				if l == "event: change" {
					return
				}
			case <-lctx.Done():
				t.Fatal("no change event within 30s of an edit")
			}
		}
	})
}
