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

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
	"github.com/flotilla-io/flotilla/hub/cli"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/tools/toolchain"
)

// The console, end to end in headless Chromium on the kwok fleet, as a
// first-time user meets it: the fleet page open before the placements exist
// shows them arrive; a staged placement's prod cells wait while its canary is
// Available; a failing cell leads to the member's reason; a user who may only
// read is refused the approval with RBAC's reason; the approval from the page
// lets the run go on, and the waiting cells turn Available on the open page,
// which is never reloaded. Screenshots go to bin/e2e-artifacts/console.
func TestConsoleInABrowser(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	b := startBrowser(t)
	admin := startConsole(t, provider.HubKubeconfig())
	viewer := startConsole(t, readOnlyKubeconfig(t, hub, "console-viewer"))

	const (
		staged   = "console-staged"
		failing  = "console-failing"
		strategy = "console-canary-then-prod"
		filter   = "?label=console-e2e%3Dyes"
	)
	labels := map[string]string{"console-e2e": "yes"}
	row := func(placement string) string { return fmt.Sprintf(`#matrix tr:has(th a:text-is("%s"))`, placement) }

	// The fleet page, open before the placements exist.
	b.do(t, browserOp{Op: "goto", URL: admin + filter})

	// A staged placement: canary member-1, then approval, then prod.
	labelMembers(t, hub, "console-stage", map[string]string{"member-1": "canary", "member-2": "prod", "member-3": "prod"})
	createOnHub(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: staged}})
	createOnHub(t, hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: staged, Name: "settings"}, Data: map[string]string{"color": "blue"}})
	createOnHub(t, hub, &placementv1beta1.ClusterStagedUpdateStrategy{
		ObjectMeta: metav1.ObjectMeta{Name: strategy},
		Spec: placementv1beta1.StagedUpdateStrategySpec{Stages: []placementv1beta1.StageConfig{
			{Name: "canary", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"console-stage": "canary"}},
				AfterStageTasks: []placementv1beta1.AfterStageTask{{Type: placementv1beta1.AfterStageTaskTypeApproval}}},
			{Name: "prod", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"console-stage": "prod"}}},
		}},
	})
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: staged, Labels: labels},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: staged}},
			Strategy:          placementv1beta1.RolloutStrategy{Type: placementv1beta1.ExternalRolloutStrategyType},
		},
	}
	if err := hub.Create(ctx, crp); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deletePlacementAndWait(t, hub, staged) })
	framework.Eventually(t, time.Minute, resourceIndexExists(ctx, hub, staged, "0"))
	createOnHub(t, hub, &placementv1beta1.ClusterStagedUpdateRun{
		ObjectMeta: metav1.ObjectMeta{Name: "console-run"},
		Spec:       placementv1beta1.StagedUpdateRunSpec{PlacementName: staged, ResourceSnapshotIndex: "0", StagedUpdateStrategyName: strategy},
	})

	// A placement whose Widget cannot apply on member-3, which lacks the kind.
	crd := widgetCRD()
	for _, c := range []client.Client{hub, memberClient(t, "member-1"), memberClient(t, "member-2")} {
		if err := c.Create(ctx, crd.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create CRD: %v", err)
		}
	}
	framework.Eventually(t, time.Minute, func() error {
		w := widget("default", "console-probe")
		if err := hub.Create(ctx, w); err != nil {
			return err
		}
		return hub.Delete(ctx, w)
	})
	createOnHub(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: failing}})
	createOnHub(t, hub, widget(failing, "w1"))
	if err := hub.Create(ctx, &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: failing, Labels: labels},
		Spec:       placementv1beta1.PlacementSpec{ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: failing}}},
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deletePlacementAndWait(t, hub, failing) })

	// On the open page: the canary Available, the prod cells waiting for the
	// run, the failing cell on member-3.
	b.do(t, browserOp{Op: "waitFor", Selector: row(staged) + " td.s-available", Count: 1, TimeoutMs: 120_000})
	b.do(t, browserOp{Op: "waitFor", Selector: row(staged) + " td.s-waiting", Count: 2, Exactly: true, TimeoutMs: 60_000})
	b.do(t, browserOp{Op: "waitFor", Selector: row(failing) + " td.s-failed", Count: 1, TimeoutMs: 120_000})
	b.do(t, browserOp{Op: "expectSamePage"})
	b.do(t, browserOp{Op: "shot", Name: "fleet-waiting-and-failed"})

	// A failing cell leads to its reason.
	b.do(t, browserOp{Op: "click", Selector: row(failing) + " td.s-failed a"})
	reason := b.do(t, browserOp{Op: "text", Selector: "li#cluster-member-3"})
	if !strings.Contains(reason, "Failed") || !strings.Contains(reason, "Widget") {
		t.Errorf("the failing cell's page says %q, want the Widget's failure on member-3", reason)
	}
	b.do(t, browserOp{Op: "shot", Name: "placement-failed-cell", FullPage: true})

	var request string
	framework.Eventually(t, time.Minute, func() error {
		var err error
		request, err = approvalRequestOf(ctx, hub, "console-run", "canary")
		return err
	})

	// A user who may only read is refused, with RBAC's reason.
	b.do(t, browserOp{Op: "goto", URL: viewer + "/placements/" + staged})
	b.do(t, browserOp{Op: "click", Selector: "button", Text: "Approve stage canary"})
	refusal := b.do(t, browserOp{Op: "text", Selector: "main"})
	if !strings.Contains(refusal, "Refused") || !strings.Contains(refusal, "forbidden") {
		t.Errorf("the viewer's approval shows %q, want a refusal with the hub's reason", refusal)
	}
	b.do(t, browserOp{Op: "shot", Name: "approval-refused"})
	req := &placementv1beta1.ClusterApprovalRequest{}
	if err := hub.Get(ctx, types.NamespacedName{Name: request}, req); err != nil {
		t.Fatal(err)
	}
	if conditions.IsTrue(req.Status.Conditions, placementv1beta1.ConditionApprovalRequestApprovedByUser) {
		t.Fatalf("the viewer's refused approval approved %s", request)
	}

	// The approval from the placement page; the run goes on.
	b.do(t, browserOp{Op: "goto", URL: admin + "/placements/" + staged})
	b.do(t, browserOp{Op: "shot", Name: "placement-waiting-for-approval", FullPage: true})
	b.do(t, browserOp{Op: "click", Selector: "button", Text: "Approve stage canary"})
	if done := b.do(t, browserOp{Op: "text", Selector: "main"}); !strings.Contains(done, "approved") {
		t.Fatalf("the approval shows %q", done)
	}
	// Back on the fleet page, left open: the prod cells turn Available.
	b.do(t, browserOp{Op: "goto", URL: admin + filter})
	start := time.Now()
	b.do(t, browserOp{Op: "waitFor", Selector: row(staged) + " td.s-available", Count: 3, TimeoutMs: 120_000})
	b.do(t, browserOp{Op: "expectSamePage"})
	framework.Logf("console: the prod cells turned Available on the open page %s after the approval", time.Since(start).Round(time.Millisecond))
	b.do(t, browserOp{Op: "shot", Name: "fleet-after-approval"})
	// The viewer's refused approval is the one error the pages may have met.
	refused := "403 " + viewer + "/approvals/" + request
	for _, e := range strings.Split(b.do(t, browserOp{Op: "errors"}), "\n") {
		if e != "" && e != refused {
			t.Errorf("a page met an error: %s", e)
		}
	}
}

// browserOp is one operation of e2e/console/driver.cjs.
type browserOp struct {
	Op        string `json:"op"`
	URL       string `json:"url,omitempty"`
	Selector  string `json:"selector,omitempty"`
	Text      string `json:"text,omitempty"`
	Count     int    `json:"count,omitempty"`
	Exactly   bool   `json:"exactly,omitempty"`
	TimeoutMs int    `json:"timeoutMs,omitempty"`
	Name      string `json:"name,omitempty"`
	FullPage  bool   `json:"fullPage,omitempty"`
}

type browser struct {
	in    io.Writer
	out   *bufio.Scanner
	shots string
}

// startBrowser starts the driver: headless Chromium through playwright-core,
// both installed by `make browser`.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	root, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	pw, chromium := os.Getenv("FLOTILLA_PLAYWRIGHT"), os.Getenv("FLOTILLA_CHROMIUM")
	if pw == "" || chromium == "" {
		t.Fatal("FLOTILLA_PLAYWRIGHT and FLOTILLA_CHROMIUM are not set: run the suite with make e2e, which installs the browser (make browser)")
	}
	shots := filepath.Join(root, "bin", "e2e-artifacts", "console")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(root, "e2e", "console", "driver.cjs"))
	cmd.Env = append(os.Environ(), "SHOTS="+shots)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the browser driver: %v", err)
	}
	t.Cleanup(func() {
		_ = in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Logf("the browser driver ended: %v", err)
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	return &browser{in: in, out: sc, shots: shots}
}

// do runs an operation and returns its text; a failed one fails the test,
// with a screenshot of the page as it was.
func (b *browser) do(t *testing.T, op browserOp) string {
	t.Helper()
	line, err := json.Marshal(op)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.in.Write(append(line, '\n')); err != nil {
		t.Fatalf("browser op %s: %v", line, err)
	}
	if !b.out.Scan() {
		t.Fatalf("browser op %s: the driver ended: %v", line, b.out.Err())
	}
	var res struct {
		OK    bool   `json:"ok"`
		Text  string `json:"text"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(b.out.Bytes(), &res); err != nil {
		t.Fatalf("browser op %s: bad answer %q: %v", line, b.out.Text(), err)
	}
	if !res.OK {
		if op.Op != "shot" {
			name := "failed-" + strings.ReplaceAll(t.Name(), "/", "-")
			shot, _ := json.Marshal(browserOp{Op: "shot", Name: name, FullPage: true})
			if _, err := b.in.Write(append(shot, '\n')); err == nil && b.out.Scan() {
				t.Logf("the page when it failed: %s", filepath.Join(b.shots, name+".png"))
			}
		}
		t.Fatalf("browser op %s: %s", line, res.Error)
	}
	return res.Text
}

// startConsole runs `kubectl flotilla console --no-browser` with a kubeconfig
// until the test ends, and returns its URL without the trailing slash.
func startConsole(t *testing.T, kubeconfig string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	cmd := cli.NewCommand()
	cmd.SetOut(w)
	cmd.SetErr(os.Stderr)
	cmd.SetArgs([]string{"console", "--no-browser", "--kubeconfig", kubeconfig})
	done := make(chan error, 1)
	go func() {
		done <- cmd.ExecuteContext(ctx)
		_ = w.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("console: %v", err)
		}
	})
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("console printed no URL: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, r) }()
	url := strings.TrimSpace(line)
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("the console's first line is %q, want its URL", line)
	}
	return strings.TrimSuffix(url, "/")
}

// readOnlyKubeconfig makes a ServiceAccount that may get, list and watch
// Flotilla's kinds and nothing else, and returns a kubeconfig with its token.
func readOnlyKubeconfig(t *testing.T, hub client.Client, name string) string {
	t.Helper()
	ctx := context.Background()
	createOnHub(t, hub, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}})
	createOnHub(t, hub, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"placement.flotilla.io", "cluster.flotilla.io"},
			Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"},
		}},
	})
	createOnHub(t, hub, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: name}},
	})
	token, err := framework.Kubectl(ctx, provider.HubKubeconfig(), "", "create", "token", name, "-n", "default", "--duration", "1h")
	if err != nil {
		t.Fatalf("kubectl create token: %v\n%s", err, token)
	}
	cfg, err := clientcmd.LoadFromFile(provider.HubKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, ai := range cfg.AuthInfos {
		ai.ClientCertificate, ai.ClientKey, ai.ClientCertificateData, ai.ClientKeyData = "", "", nil, nil
		ai.Token = strings.TrimSpace(token)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
