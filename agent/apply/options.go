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
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Defaults of Options.
const (
	// DefaultFieldManager is the server-side apply field manager of the agent.
	DefaultFieldManager = "flotilla-agent"
	// DefaultNamespace is the member namespace where the Applier keeps its records.
	DefaultNamespace = "flotilla-system"
	// DefaultEstablishTimeout bounds the wait for a CRD applied by a Work to become
	// established before the Work's custom resources of that CRD are applied.
	DefaultEstablishTimeout = 15 * time.Second
)

// Options configures an Applier. The zero value is ready to use.
type Options struct {
	// FieldManager is the field manager of server-side apply.
	// Default: DefaultFieldManager ("flotilla-agent").
	FieldManager string

	// Namespace is the member namespace where the Applier keeps a record (a
	// ConfigMap) per Work; it is created when the first record is written.
	// Default: DefaultNamespace ("flotilla-system").
	Namespace string

	// EstablishTimeout bounds how long Apply waits for a CustomResourceDefinition of
	// the Work to become established (and served) before applying custom resources
	// of it. After the wait, those resources are applied anyway and fail if their
	// kind is still unknown. Default: DefaultEstablishTimeout (15s).
	EstablishTimeout time.Duration

	// DeniedKinds are kinds the Applier never applies, such as
	// {Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}; manifests of
	// them fail with a message naming the rule. Default: none.
	DeniedKinds []schema.GroupKind

	// DeniedNamespaces are namespaces the Applier never applies into (nor creates or
	// changes as Namespace objects). The Applier's own Namespace is always denied,
	// whatever this says: it holds the agent's identity and records; so are a hub's
	// own namespaces (flotilla-system, flotilla-member-*) and machinery (guard.go).
	// Default: none.
	DeniedNamespaces []string

	// ProtectedClusterObjects are cluster-scoped objects the Applier never changes,
	// given as "Kind.group/name" (e.g. "ClusterRole.rbac.authorization.k8s.io/flotilla-agent"):
	// the agent's own RBAC. Default: DefaultProtectedClusterObjects.
	ProtectedClusterObjects []string

	// LeastPrivilege, if set, makes the Applier work with the least-privilege RBAC
	// profile of manifests/agent/least-privilege: it may only write namespaced
	// objects in namespaces it was granted, so for every Namespace it applies it
	// binds its ServiceAccount there to LeastPrivilege.ClusterRole, and it watches
	// what it applied namespace by namespace. Default: nil (full access).
	LeastPrivilege *LeastPrivilege

	// OnHub says that the member cluster is the fleet's hub itself, joined as a
	// member (`agent join --hub-as-member`) so that placements can place placements.
	// There the objects that exist are the sources placements select, so the
	// Applier never takes over an object that no Work applied, whatever
	// whenToTakeOver says: taking it over would let the removal of a placement
	// delete its own source. Default: false.
	OnHub bool

	// OnChange, if set, is called with the name of a Work whenever an object the
	// Applier applied for it changes on the member (it is watched, not polled).
	// It must not block. Default: nil (nothing is watched).
	OnChange func(workName string)
}

// LeastPrivilege configures the least-privilege RBAC profile.
type LeastPrivilege struct {
	// ClusterRole is the role bound in every applied namespace, with what the agent
	// may do to namespaced objects. Required.
	ClusterRole string
	// ServiceAccountNamespace and ServiceAccountName name the agent's
	// ServiceAccount, the subject of the bindings. Required.
	ServiceAccountNamespace, ServiceAccountName string
}

// DefaultProtectedClusterObjects are the agent's own RBAC objects as manifests/agent
// installs them.
var DefaultProtectedClusterObjects = []string{
	"ClusterRole.rbac.authorization.k8s.io/flotilla-agent",
	"ClusterRoleBinding.rbac.authorization.k8s.io/flotilla-agent",
	"ClusterRole.rbac.authorization.k8s.io/flotilla-agent-namespaced",
}

// setDefaults fills in the unset fields of o.
func (o *Options) setDefaults() {
	if o.FieldManager == "" {
		o.FieldManager = DefaultFieldManager
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.EstablishTimeout <= 0 {
		o.EstablishTimeout = DefaultEstablishTimeout
	}
	if o.ProtectedClusterObjects == nil {
		o.ProtectedClusterObjects = DefaultProtectedClusterObjects
	}
}
