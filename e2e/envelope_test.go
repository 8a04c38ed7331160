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
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
)

// A ResourceQuota inside an envelope ConfigMap reaches every member, without
// the envelope, and never exists on the hub; so does a ResourceEnvelope's
// ServiceAccount; a key that does not hold a
// manifest is reported per cluster, naming the envelope and the key.
func TestEnvelopeCarriesAQuotaToMembersOnly(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	const ns = "e2e-envelope"
	createOnHub(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	envelope := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "quota-envelope", Annotations: map[string]string{placementv1beta1.AnnotationEnvelopeConfigMap: "true"}},
		Data: map[string]string{"quota.yaml": "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: pods\n  namespace: " + ns +
			"\nspec:\n  hard:\n    pods: \"5\"\n"},
	}
	createOnHub(t, hub, envelope)
	createOnHub(t, hub, &placementv1beta1.ResourceEnvelope{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "robot-envelope"},
		Data: map[string]placementv1beta1.ResourceContent{"sa": {RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"robot"}}`)}}}})
	placeNamespace(t, hub, "e2e-envelope", ns, &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAll})
	framework.Eventually(t, 3*time.Minute, framework.PlacementConditionsTrue(ctx, hub, "e2e-envelope", allMembers...))
	quota := types.NamespacedName{Namespace: ns, Name: "pods"}
	for _, m := range allMembers {
		framework.Eventually(t, time.Minute, onMember(t, m, &corev1.ResourceQuota{}, quota, true))
		framework.Eventually(t, time.Minute, onMember(t, m, &corev1.ConfigMap{}, types.NamespacedName{Namespace: ns, Name: "quota-envelope"}, false))
		framework.Eventually(t, time.Minute, onMember(t, m, &corev1.ServiceAccount{}, types.NamespacedName{Namespace: ns, Name: "robot"}, true))
	}
	if err := hub.Get(ctx, quota, &corev1.ResourceQuota{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the quota exists on the hub (err %v)", err)
	}

	// A key that is not a manifest: the clusters the rolling update moves to it
	// report it (and hold the others back), and all keep their quota.
	if err := hub.Get(ctx, keyOf(envelope), envelope); err != nil {
		t.Fatal(err)
	}
	envelope.Data["broken.yaml"] = "kind: [unclosed"
	if err := hub.Update(ctx, envelope); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Name: "e2e-envelope"}, crp); err != nil {
			return err
		}
		want := `envelope ConfigMap ` + ns + `/quota-envelope key "broken.yaml"`
		var seen []string
		for _, pcs := range crp.Status.PlacementStatuses {
			// Overridden is the first stage that fails (WorkSynchronized waits on it).
			c := meta(pcs.Conditions, placementv1beta1.ConditionOverridden)
			if c != nil && c.Status == metav1.ConditionFalse && c.Reason == placementv1beta1.ReasonEnvelopeInvalid && strings.Contains(c.Message, want) {
				return nil
			}
			seen = append(seen, fmt.Sprintf("%s: %+v", pcs.ClusterName, c))
		}
		return fmt.Errorf("no cluster reports Overridden=False %s naming %s: %v", placementv1beta1.ReasonEnvelopeInvalid, want, seen)
	})
	for _, m := range allMembers {
		framework.Eventually(t, time.Minute, onMember(t, m, &corev1.ResourceQuota{}, quota, true))
	}
}

func keyOf(o metav1.Object) types.NamespacedName {
	return types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
}
