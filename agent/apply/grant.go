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

package apply

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GrantRoleBindingName is the RoleBinding the least-privilege profile puts in every
// namespace the agent applies.
const GrantRoleBindingName = "flotilla-agent"

var roleBindingGVR = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}

// grant binds the agent's ServiceAccount, in a namespace the Work applies, to the
// least-privilege namespaced ClusterRole, so that it may apply the Work's objects
// there. It does nothing with full access.
func (a *Applier) grant(ctx context.Context, namespace string) error {
	lp := a.opts.LeastPrivilege
	if lp == nil {
		return nil
	}
	rb := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1",
		"kind":       "RoleBinding",
		"metadata": map[string]any{
			"name": GrantRoleBindingName, "namespace": namespace,
			"labels": map[string]any{labelManagedBy: managedByAgent},
		},
		"roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": lp.ClusterRole},
		"subjects": []any{map[string]any{
			"kind": "ServiceAccount", "name": lp.ServiceAccountName, "namespace": lp.ServiceAccountNamespace,
		}},
	}}
	_, err := a.dynamic.Resource(roleBindingGVR).Namespace(namespace).Apply(ctx, GrantRoleBindingName, rb,
		metav1.ApplyOptions{FieldManager: a.opts.FieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("failed to grant the agent access to namespace %s (least-privilege profile): %s", namespace, apiMessage(err))
	}
	// The API server's authorizer learns of the binding from its own watch: wait
	// (briefly) until it lets the agent in, so that the Work's objects in the
	// namespace do not fail for a moment.
	_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, grantWait, true, func(ctx context.Context) (bool, error) {
		_, err := a.dynamic.Resource(configMapGVR).Namespace(namespace).List(ctx, metav1.ListOptions{Limit: 1})
		return !apierrors.IsForbidden(err), nil
	})
	return nil
}

// grantWait bounds the wait for a granted namespace to become writable.
const grantWait = 5 * time.Second
