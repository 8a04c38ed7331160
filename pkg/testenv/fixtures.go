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

package testenv

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// Create creates obj and fails the test, naming the object, if it cannot.
func Create(t testing.TB, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("failed to create %T %s: %v", obj, obj.GetName(), err)
	}
}

// ReadyMember creates a MemberCluster with the labels that is Joined,
// AgentConnected and Healthy, and its namespace on the hub, as a member that has
// joined looks to the hub's controllers.
func ReadyMember(t testing.TB, c client.Client, name string, labels map[string]string) {
	t.Helper()
	Create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: clusterv1beta1.MemberNamespace(name)}})
	mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	Create(t, c, mc)
	for _, typ := range []string{clusterv1beta1.ConditionJoined, clusterv1beta1.ConditionAgentConnected, clusterv1beta1.ConditionHealthy} {
		conditions.Set(&mc.Status.Conditions, typ, metav1.ConditionTrue, typ, "test", mc.Generation)
	}
	if err := c.Status().Update(context.Background(), mc); err != nil {
		t.Fatalf("failed to make MemberCluster %s ready: %v", name, err)
	}
}
