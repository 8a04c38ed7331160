//go:build kind

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

// Package kindsmoke is the kind smoke suite CI runs (make e2e-kind-smoke): a hub
// and one member as kind clusters in podman, from the node image built here. The
// hub is installed the way docs/operations/helm.md tells users to, with its Helm
// chart (charts/flotilla-hub and the pinned helm) and the image just built, or
// from manifests/hub with FLOTILLA_KIND_HUB_CHART=0; the member joins with
// `agent join --install`, a placement's pods really run, and an agent pod that
// is deleted comes back and reconnects.
package kindsmoke

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
	"github.com/flotilla-io/flotilla/tools/localfleet/fleet"
	"github.com/flotilla-io/flotilla/tools/nodeimage/node"
	"github.com/flotilla-io/flotilla/tools/toolchain"
)

// hubFromChart installs the hub with its Helm chart (CI's default), or from
// manifests/hub with FLOTILLA_KIND_HUB_CHART=0.
var hubFromChart = os.Getenv("FLOTILLA_KIND_HUB_CHART") != "0"

const member = "member-1"

var provider *framework.KwokProvider

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "flotilla-kind-smoke-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "kind smoke: %v\n", err)
		return 1
	}
	provider, err = framework.NewKwokProvider(fleet.Options{
		Dir: dir, Members: 1, Out: os.Stderr, Provider: fleet.ProviderKind, HubFromChart: hubFromChart,
		MemberLabels: map[string]map[string]string{member: {"env": "smoke"}},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "kind smoke: %v\n", err)
		return 1
	}
	start := time.Now()
	if err := provider.Up(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "kind smoke: fleet up failed: %v\n", err)
		return 1
	}
	framework.Logf("kind fleet (hub + 1 member) up in %s", time.Since(start).Round(time.Second))
	code := m.Run()
	if os.Getenv("E2E_KEEP_FLEET") != "" {
		framework.Logf("E2E_KEEP_FLEET set: leaving the fleet in %s", dir)
		return code
	}
	if err := provider.Down(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "kind smoke: fleet down failed: %v\n", err)
		return 1
	}
	return code
}

func clientFor(t *testing.T, kubeconfig string) client.Client {
	t.Helper()
	c, err := framework.Client(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runningPods returns a check that exactly n pods of a selector run real
// containers (a container ID from containerd) of the given image.
func runningPods(ctx context.Context, c client.Client, namespace string, selector map[string]string, n int, image string, pods *corev1.PodList) func() error {
	return func() error {
		if err := c.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels(selector)); err != nil {
			return err
		}
		running := 0
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) == 0 {
				continue
			}
			cs := p.Status.ContainerStatuses[0]
			if cs.State.Running == nil || !strings.HasPrefix(cs.ContainerID, "containerd://") {
				continue
			}
			if image != "" && p.Spec.Containers[0].Image != image {
				return fmt.Errorf("pod %s runs %s, want %s", p.Name, p.Spec.Containers[0].Image, image)
			}
			running++
		}
		if running != n {
			return fmt.Errorf("%d of %d pods in %s run (%d listed)", running, n, namespace, len(pods.Items))
		}
		return nil
	}
}

func imageTag(t *testing.T) string {
	t.Helper()
	st, err := provider.State()
	if err != nil || st.ImageTag == "" {
		t.Fatalf("the fleet recorded no image tag (err %v)", err)
	}
	return st.ImageTag
}

func TestHubRunsAsTwoPodsOfTheBuiltImage(t *testing.T) {
	ctx := context.Background()
	hub := clientFor(t, provider.HubKubeconfig())
	pods := &corev1.PodList{}
	framework.Eventually(t, 2*time.Minute, runningPods(ctx, hub, "flotilla-system",
		map[string]string{"app.kubernetes.io/name": "flotilla-hub"}, 2, "flotilla-hub:"+imageTag(t), pods))
	deploy := &appsv1.Deployment{}
	if err := hub.Get(ctx, types.NamespacedName{Namespace: "flotilla-system", Name: "flotilla-hub"}, deploy); err != nil {
		t.Fatal(err)
	}
	if deploy.Status.ReadyReplicas != 2 {
		t.Errorf("hub Deployment: %d ready replicas, want 2", deploy.Status.ReadyReplicas)
	}
	if got := deploy.Labels["app.kubernetes.io/managed-by"]; hubFromChart && (got != "Helm" || deploy.Labels["app.kubernetes.io/instance"] != fleet.HubChartRelease) {
		t.Errorf("hub Deployment labels %v: not installed by Helm as release %s", deploy.Labels, fleet.HubChartRelease)
	}
}

func TestJoinInstallRunsTheAgentPodAndItConnects(t *testing.T) {
	ctx := context.Background()
	m := clientFor(t, provider.MemberKubeconfig(member))
	pods := &corev1.PodList{}
	framework.Eventually(t, 2*time.Minute, runningPods(ctx, m, "flotilla-system",
		map[string]string{"app.kubernetes.io/name": "flotilla-agent"}, 1, "flotilla-agent:"+imageTag(t), pods))
	hub := clientFor(t, provider.HubKubeconfig())
	framework.Eventually(t, time.Minute, framework.MemberCondition(ctx, hub, member, clusterv1beta1.ConditionAgentConnected, metav1.ConditionTrue))
}

func TestPlacedDeploymentRunsRealContainersOnTheMember(t *testing.T) {
	ctx := context.Background()
	hub := clientFor(t, provider.HubKubeconfig())
	root, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	// Nothing can be pulled: the pause image every node carries runs until stopped.
	pause, err := node.PauseImage(root)
	if err != nil {
		t.Fatal(err)
	}
	const ns = "smoke"
	labels := map[string]string{"app": "sleeper"}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sleeper"},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](2),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{
						Name: "sleeper", Image: pause, ImagePullPolicy: corev1.PullNever,
					}}},
				},
			},
		},
		&placementv1beta1.ClusterResourcePlacement{
			ObjectMeta: metav1.ObjectMeta{Name: ns},
			Spec: placementv1beta1.PlacementSpec{
				ResourceSelectors: []placementv1beta1.ResourceSelector{{Group: "", Version: "v1", Kind: "Namespace", Name: ns}},
				Policy:            &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAll},
			},
		},
	}
	for _, obj := range objs {
		if err := hub.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for i := len(objs) - 1; i >= 0; i-- {
			_ = hub.Delete(context.Background(), objs[i])
		}
	})
	framework.Eventually(t, 3*time.Minute, framework.PlacementConditionsTrue(ctx, hub, ns, member))
	m := clientFor(t, provider.MemberKubeconfig(member))
	pods := &corev1.PodList{}
	framework.Eventually(t, 2*time.Minute, runningPods(ctx, m, ns, labels, 2, pause, pods))
	for _, p := range pods.Items {
		t.Logf("%s on %s: %s", p.Name, p.Spec.NodeName, p.Status.ContainerStatuses[0].ContainerID)
	}
}

func TestDeletedAgentPodComesBackAndReconnects(t *testing.T) {
	ctx := context.Background()
	m := clientFor(t, provider.MemberKubeconfig(member))
	hub := clientFor(t, provider.HubKubeconfig())
	selector := map[string]string{"app.kubernetes.io/name": "flotilla-agent"}
	pods := &corev1.PodList{}
	framework.Eventually(t, time.Minute, runningPods(ctx, m, "flotilla-system", selector, 1, "", pods))
	old := pods.Items[0]
	deleted := time.Now().Truncate(time.Second)
	if err := m.Delete(ctx, &old); err != nil {
		t.Fatal(err)
	}
	framework.Logf("deleted agent pod %s", old.Name)
	framework.Eventually(t, 2*time.Minute, func() error {
		if err := runningPods(ctx, m, "flotilla-system", selector, 1, "", pods)(); err != nil {
			return err
		}
		if pods.Items[0].Name == old.Name {
			return fmt.Errorf("the deleted pod %s still runs", old.Name)
		}
		return nil
	})
	framework.Eventually(t, 2*time.Minute, func() error {
		mc := &clusterv1beta1.MemberCluster{}
		if err := hub.Get(ctx, types.NamespacedName{Name: member}, mc); err != nil {
			return err
		}
		// The hub's disconnect grace (--disconnect-grace) may keep AgentConnected
		// True through a quick restart: the new session shows in agentSession.
		for _, c := range mc.Status.Conditions {
			if c.Type != clusterv1beta1.ConditionAgentConnected {
				continue
			}
			if c.Status != metav1.ConditionTrue {
				return fmt.Errorf("AgentConnected=%s (%s), want True", c.Status, c.Reason)
			}
			if s := mc.Status.AgentSession; s == nil || s.ConnectedSince == nil || s.ConnectedSince.Time.Before(deleted) {
				return fmt.Errorf("agentSession %+v, want a session connected since the pod was deleted at %s", s, deleted)
			}
			return nil
		}
		return fmt.Errorf("member %s has no AgentConnected condition", member)
	})
	framework.Logf("agent pod %s replaced %s and reconnected", pods.Items[0].Name, old.Name)
}
