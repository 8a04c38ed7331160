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

import "time"

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
}
