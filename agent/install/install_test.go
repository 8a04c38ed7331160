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

package install

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent/join"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// env plays the member cluster: a real API server with RBAC and no controllers,
// so the tests act as the Deployment controller and kubelet where they need one.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m, testenv.Options{MemberCluster: true}, func(e *testenv.Env) error {
		env = e
		return nil
	}))
}

func TestRenderKeepsTheKustomizationOrderAndSetsTheImage(t *testing.T) {
	objs, err := Render(ProfileFull, "registry.example/flotilla-agent:v9")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind())
		if o.GetKind() == "Deployment" {
			d := &appsv1.Deployment{}
			if err := env.Scheme.Convert(o, d, nil); err != nil {
				t.Fatal(err)
			}
			if got := d.Spec.Template.Spec.Containers[0].Image; got != "registry.example/flotilla-agent:v9" {
				t.Errorf("agent image = %q, want the one given", got)
			}
		}
	}
	want := []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Deployment"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("rendered kinds (-want +got):\n%s", diff)
	}
}

func TestDefaultImageIsTheOneTheManifestsName(t *testing.T) {
	got, err := DefaultImage()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, ImageName+":") || strings.HasSuffix(got, ":latest") {
		t.Errorf("DefaultImage() = %q, want flotilla-agent with the tag manifests/agent sets", got)
	}
}

func TestPodState(t *testing.T) {
	waiting := func(reason, message string) corev1.PodStatus {
		return corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "agent", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}},
		}}}
	}
	for _, tc := range []struct {
		name        string
		status      corev1.PodStatus
		wantRunning bool
		wantFatal   string
		wantSummary string
	}{
		{
			name: "a running container is running",
			status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
				Name: "agent", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
			}}},
			wantRunning: true,
		},
		{name: "an image the node never pulls is fatal and named", status: waiting("ErrImageNeverPull", "not present"), wantFatal: "cannot get the agent image img:1 (ErrImageNeverPull"},
		{name: "a pull back-off is fatal", status: waiting("ImagePullBackOff", "back-off"), wantFatal: "ImagePullBackOff"},
		{name: "a crash loop is fatal and points at the logs", status: waiting("CrashLoopBackOff", "back-off"), wantFatal: "kubectl logs -n flotilla-system agent-1"},
		{name: "a container being created is waited for", status: waiting("ContainerCreating", ""), wantSummary: "waiting: agent ContainerCreating"},
		{
			name: "an unscheduled pod says why",
			status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
				Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Message: "0/1 nodes are available",
			}}},
			wantSummary: "not scheduled: 0/1 nodes are available",
		},
		{name: "a running phase without container statuses is not yet running", status: corev1.PodStatus{Phase: corev1.PodRunning}, wantSummary: "is Running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "agent-1", Namespace: "flotilla-system"}, Status: tc.status}
			got := podState(pod, "img:1")
			if got.running != tc.wantRunning {
				t.Errorf("running = %v, want %v", got.running, tc.wantRunning)
			}
			if !strings.Contains(got.fatal, tc.wantFatal) || (tc.wantFatal == "") != (got.fatal == "") {
				t.Errorf("fatal = %q, want it to contain %q", got.fatal, tc.wantFatal)
			}
			if !strings.Contains(got.summary, tc.wantSummary) {
				t.Errorf("summary = %q, want it to contain %q", got.summary, tc.wantSummary)
			}
		})
	}
}

// withIdentity makes the state `agent join` leaves: the namespace and the identity Secret.
func withIdentity(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: join.Namespace}}
	if err := env.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: join.Namespace, Name: join.SecretName},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"name": []byte("member-1")},
	}
	if err := env.Client.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), s) })
}

// agentObjects are the objects install makes besides the namespace.
func agentObjects() []client.Object {
	return []client.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: join.Namespace, Name: "flotilla-agent"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: join.Namespace, Name: "flotilla-agent"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "flotilla-agent"}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "flotilla-agent"}},
	}
}

// noAgentObjects checks that install left none of its objects behind.
func noAgentObjects(t *testing.T) {
	t.Helper()
	for _, obj := range agentObjects() {
		err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
		if !apierrors.IsNotFound(err) {
			t.Errorf("%T %s is still there (err %v)", obj, obj.GetName(), err)
		}
	}
}

func TestInstallWithoutIdentitySaysToJoinFirst(t *testing.T) {
	_, err := Install(context.Background(), Options{Member: env.Config, Image: "flotilla-agent:test", Timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "run `agent join` first") {
		t.Fatalf("Install without an identity: err = %v, want it to say to join first", err)
	}
	noAgentObjects(t)
}

func TestInstallWithoutRBACNamesTheMissingPermissionsAndChangesNothing(t *testing.T) {
	withIdentity(t)
	ctx := context.Background()
	// The user may read the identity (so it gets past that check) but not
	// create cluster-wide RBAC or Deployments.
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: join.Namespace, Name: "limited"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"secrets", "serviceaccounts"}, Verbs: []string{"get", "create", "patch"}},
		},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: join.Namespace, Name: "limited"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "limited"},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: "limited"}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
	}
	cfg, err := env.AddUser("limited")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Install(ctx, Options{Member: cfg, Image: "flotilla-agent:test", Timeout: time.Second})
	if err == nil {
		t.Fatal("Install without the permissions succeeded")
	}
	for _, want := range []string{
		"missing permissions",
		"create clusterroles.rbac.authorization.k8s.io (for ClusterRole flotilla-agent)",
		"create clusterrolebindings.rbac.authorization.k8s.io",
		"create deployments.apps in namespace flotilla-system",
		"nothing was changed",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "serviceaccounts") {
		t.Errorf("error %q names serviceaccounts, which the user may create", err)
	}
	noAgentObjects(t)
}

func TestInstallWhoseImageTheNodesCannotGetRollsBack(t *testing.T) {
	withIdentity(t)
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, err := Install(ctx, Options{Member: env.Config, Image: "flotilla-agent:missing", Timeout: time.Minute})
		done <- err
	}()
	// Play the Deployment controller and kubelet: a pod whose image the node lacks.
	deploy := &appsv1.Deployment{}
	testenv.Eventually(t, 30*time.Second, func() error {
		return env.Client.Get(ctx, types.NamespacedName{Namespace: join.Namespace, Name: "flotilla-agent"}, deploy)
	})
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: join.Namespace, Name: "flotilla-agent-1", Labels: deploy.Spec.Selector.MatchLabels},
		Spec:       deploy.Spec.Template.Spec,
	}
	if err := env.Client.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), pod) })
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "agent", Image: "flotilla-agent:missing",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason: "ErrImageNeverPull", Message: `Container image "flotilla-agent:missing" is not present with pull policy of Never`,
		}},
	}}}
	if err := env.Client.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("Install did not return")
	}
	if err == nil || !strings.Contains(err.Error(), "cannot get the agent image flotilla-agent:missing (ErrImageNeverPull") ||
		!strings.Contains(err.Error(), "nothing of the agent was left installed") {
		t.Fatalf("err = %v, want it to name the image the nodes cannot get and say it rolled back", err)
	}
	noAgentObjects(t)
	// What join made stays.
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: join.Namespace, Name: join.SecretName}, &corev1.Secret{}); err != nil {
		t.Errorf("the identity Secret is gone: %v", err)
	}
	if err := env.Client.Get(ctx, types.NamespacedName{Name: join.Namespace}, &corev1.Namespace{}); err != nil {
		t.Errorf("namespace %s is gone: %v", join.Namespace, err)
	}
}

func TestInstallWhosePodNeverRunsRollsBackAndRestoresWhatExisted(t *testing.T) {
	withIdentity(t)
	ctx := context.Background()
	// A ServiceAccount that was there before install: it must be put back, not deleted.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: join.Namespace, Name: "flotilla-agent", Labels: map[string]string{"kept": "yes"}}}
	if err := env.Client.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), sa) })

	_, err := Install(ctx, Options{Member: env.Config, Image: "flotilla-agent:test", Timeout: 3 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "did not run within 3s: no agent pod was created") {
		t.Fatalf("err = %v, want the timeout and what was seen", err)
	}
	got := &corev1.ServiceAccount{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(sa), got); err != nil {
		t.Fatalf("the ServiceAccount that existed before is gone: %v", err)
	}
	if diff := cmp.Diff(map[string]string{"kept": "yes"}, got.Labels); diff != "" {
		t.Errorf("ServiceAccount labels not restored (-want +got):\n%s", diff)
	}
	for _, obj := range agentObjects() {
		if _, isSA := obj.(*corev1.ServiceAccount); isSA {
			continue
		}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s is still there (err %v)", obj, obj.GetName(), err)
		}
	}
}

func TestOnlyLivePodsOfTheInstalledImageCount(t *testing.T) {
	now := metav1.Now()
	pod := func(image string, deleting bool) *corev1.Pod {
		p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: image}}}}
		if deleting {
			p.DeletionTimestamp = &now
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"a pod of the installed image counts", pod("flotilla-agent:v2", false), true},
		{"a pod of an earlier image does not", pod("flotilla-agent:v1", false), false},
		{"a terminating pod does not", pod("flotilla-agent:v2", true), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := isAgentPodOf(tc.pod, "flotilla-agent:v2"); got != tc.want {
				t.Errorf("isAgentPodOf = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRenderLeastPrivilegeProfile(t *testing.T) {
	objs, err := Render(ProfileLeastPrivilege, "flotilla-agent:v9")
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
		if o.GetKind() == "Deployment" {
			d := &appsv1.Deployment{}
			if err := env.Scheme.Convert(o, d, nil); err != nil {
				t.Fatal(err)
			}
			args = d.Spec.Template.Spec.Containers[0].Args
		}
	}
	if !slices.Contains(args, "--rbac-profile=least-privilege") {
		t.Errorf("agent args = %v, want --rbac-profile=least-privilege", args)
	}
	if kinds["Deployment"] != 1 || kinds["ClusterRole"] < 2 {
		t.Errorf("rendered kinds = %v, want one Deployment and the profile's ClusterRoles", kinds)
	}
	if _, err := Render("admin", "flotilla-agent:v9"); err == nil || !strings.Contains(err.Error(), "unknown RBAC profile") {
		t.Errorf("Render of an unknown profile: err = %v, want an unknown profile error", err)
	}
}
