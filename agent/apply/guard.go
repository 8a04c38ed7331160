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
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Guards: what the agent never touches, whatever the hub sends. A compromised or
// mistaken hub must not be able to take the member's agent over (its identity Secret
// and records live in the agent's namespace; its RBAC decides what it may do), to
// reach what the member's operator put off limits (Options.DeniedKinds and
// Options.DeniedNamespaces), or — when the member is itself a Flotilla hub, such as
// the hub joined as a member for compound placements — to rewrite the hub's own
// machinery (see hubMachinery).
//
// Flotilla's machinery is refused on every member, not only on a hub: on a member
// that is not a hub those namespaces and kinds mean nothing, and a placement that
// carries them is a mistake either way. The placement kinds users write
// (ClusterResourcePlacement, ResourcePlacement, overrides, envelopes, staged update
// runs and strategies, evictions, disruption budgets, Locations) stay allowed: a
// placement that places placements onto the hub is what compound placements are.

// hubBookkeepingKinds are the kinds of Flotilla's API groups that the hub's own
// controllers write (or, for MemberCluster, that the join endpoint creates): a
// placement must not forge them, or it could fake a member, a binding, a snapshot,
// a Work or an approval.
var hubBookkeepingKinds = []schema.GroupKind{
	{Group: clusterv1beta1.GroupVersion.Group, Kind: "MemberCluster"},
	{Group: placementv1beta1.GroupVersion.Group, Kind: "ClusterResourceBinding"},
	{Group: placementv1beta1.GroupVersion.Group, Kind: "ResourceBinding"},
	{Group: placementv1beta1.GroupVersion.Group, Kind: "ClusterResourceSnapshot"},
	{Group: placementv1beta1.GroupVersion.Group, Kind: "ResourceSnapshot"},
	{Group: placementv1beta1.GroupVersion.Group, Kind: "ClusterSchedulingPolicySnapshot"},
	{Group: placementv1beta1.GroupVersion.Group, Kind: "SchedulingPolicySnapshot"},
	{Group: placementv1beta1.GroupVersion.Group, Kind: "ClusterResourceOverrideSnapshot"},
	{Group: placementv1beta1.GroupVersion.Group, Kind: "ResourceOverrideSnapshot"},
	{Group: placementv1beta1.GroupVersion.Group, Kind: "Work"},
	{Group: placementv1beta1.GroupVersion.Group, Kind: "ClusterApprovalRequest"},
}

// hubRBACName names the hub's ClusterRoles and ClusterRoleBindings (manifests/hub):
// flotilla-hub, and flotilla-hub-<purpose> such as flotilla-hub-upsync.
const hubRBACName = "flotilla-hub"

var (
	clusterRoleGK        = schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}
	clusterRoleBindingGK = schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}
)

// denied returns why a resolved manifest must not be applied, or "" if it may be.
func (a *Applier) denied(m *manifest) string {
	gk := m.gvk.GroupKind()
	ns := m.obj.GetNamespace()
	if gk == namespaceGK {
		ns = m.obj.GetName()
	}
	switch {
	case ns == a.opts.Namespace:
		return fmt.Sprintf("%s is refused: namespace %s is the agent's own (it holds the agent's identity and records)", m.describe(), ns)
	case ns != "" && slices.Contains(a.opts.DeniedNamespaces, ns):
		return fmt.Sprintf("%s is refused: namespace %s is on the agent's deny-list (--deny-namespaces)", m.describe(), ns)
	case slices.Contains(a.opts.DeniedKinds, gk):
		return fmt.Sprintf("%s is refused: kind %s is on the agent's deny-list (--deny-kinds)", m.describe(), kindString(gk))
	case ns == "" && slices.Contains(a.opts.ProtectedClusterObjects, kindString(gk)+"/"+m.obj.GetName()):
		return fmt.Sprintf("%s is refused: it is the agent's own RBAC", m.describe())
	}
	if why := hubMachinery(gk, ns, m.obj.GetName()); why != "" {
		return fmt.Sprintf("%s is refused: %s; the agent never applies the hub's own machinery, not even on the hub joined as a member", m.describe(), why)
	}
	return ""
}

// hubMachinery says what part of a Flotilla hub an object would be, or "" if none:
// the hub's namespace (flotilla-system) and the members' Work namespaces
// (flotilla-member-*), the CustomResourceDefinitions of Flotilla's API groups, the
// hub's ClusterRoles and ClusterRoleBindings, and the kinds the hub's controllers
// write (hubBookkeepingKinds). ns is the object's namespace, or its name for a
// Namespace.
func hubMachinery(gk schema.GroupKind, ns, name string) string {
	switch {
	case ns == clusterv1beta1.HubNamespace:
		return fmt.Sprintf("namespace %s is the hub's own (its CA, tokens and leases)", ns)
	case strings.HasPrefix(ns, clusterv1beta1.MemberNamespacePrefix):
		return fmt.Sprintf("namespace %s is a member's Work namespace on the hub (%s*)", ns, clusterv1beta1.MemberNamespacePrefix)
	case gk == crdGK && (strings.HasSuffix(name, "."+clusterv1beta1.GroupVersion.Group) || strings.HasSuffix(name, "."+placementv1beta1.GroupVersion.Group)):
		return "it is one of the hub's own CustomResourceDefinitions"
	case (gk == clusterRoleGK || gk == clusterRoleBindingGK) && (name == hubRBACName || strings.HasPrefix(name, hubRBACName+"-")):
		return "it is the hub's own RBAC (" + hubRBACName + ", " + hubRBACName + "-*)"
	case slices.Contains(hubBookkeepingKinds, gk):
		return fmt.Sprintf("kind %s is written only by the hub's controllers", kindString(gk))
	}
	return ""
}
