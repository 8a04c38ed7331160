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
)

// Guards: what the agent never touches, whatever the hub sends. A compromised or
// mistaken hub must not be able to take the member's agent over (its identity Secret
// and records live in the agent's namespace; its RBAC decides what it may do) or to
// reach what the member's operator put off limits (Options.DeniedKinds and
// Options.DeniedNamespaces).

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
	return ""
}
