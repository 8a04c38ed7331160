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
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
	"github.com/flotilla-io/flotilla/hub/cli"
)

// Every object the agent applies names the hub, the placement, the resource
// index and the Work; the index follows an edit; who-placed answers from the hub.
func TestAppliedObjectsSayWhereTheyCameFrom(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	const name = "e2e-provenance"
	appNamespace(t, hub, name)
	placeNamespace(t, hub, name, name, &placementv1beta1.PlacementPolicy{
		PlacementType: placementv1beta1.PickFixed, ClusterNames: []string{"member-1"}})
	framework.Eventually(t, 3*time.Minute, framework.PlacementConditionsTrue(ctx, hub, name, "member-1"))

	member := memberClient(t, "member-1")
	key := types.NamespacedName{Namespace: name, Name: "settings"}
	provenance := func(index string) func() error {
		want := map[string]string{
			placementv1beta1.AnnotationHub:           "flotilla-hub",
			placementv1beta1.AnnotationPlacement:     "ClusterResourcePlacement/" + name,
			placementv1beta1.AnnotationResourceIndex: index,
			placementv1beta1.AnnotationWork:          name + "-work",
		}
		return func() error {
			cm := &corev1.ConfigMap{}
			if err := member.Get(ctx, key, cm); err != nil {
				return err
			}
			got := map[string]string{}
			for k := range want {
				got[k] = cm.Annotations[k]
			}
			if diff := cmp.Diff(want, got); diff != "" {
				return fmt.Errorf("provenance of the ConfigMap on member-1 (-want +got):\n%s", diff)
			}
			return nil
		}
	}
	framework.Eventually(t, 2*time.Minute, provenance("0"))

	cm := &corev1.ConfigMap{}
	if err := hub.Get(ctx, key, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["color"] = "green"
	if err := hub.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, provenance("1"))
	framework.Eventually(t, 2*time.Minute, framework.PlacementConditionsTrue(ctx, hub, name, "member-1"))

	cmd := cli.NewCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"who-placed", "configmap/settings", "-n", name, "--cluster", "member-1", "--kubeconfig", provider.HubKubeconfig()})
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatalf("kubectl flotilla who-placed: %v\n%s", err, out.String())
	}
	for _, want := range []string{"ClusterResourcePlacement " + name, "resource index: 1 (hub flotilla-hub)", "Applied   True"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("who-placed does not say %q:\n%s", want, out.String())
		}
	}
}
