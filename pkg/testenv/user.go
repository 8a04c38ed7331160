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
	"fmt"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// AddUser provisions a user of the test API server (in groups) and returns a
// config that authenticates as it. The server enforces RBAC, so the user may do
// only what roles bound to it (or its groups) grant.
func (e *Env) AddUser(name string, groups ...string) (*rest.Config, error) {
	if e == nil || e.env == nil {
		return nil, fmt.Errorf("the test API server is not running")
	}
	u, err := e.env.ControlPlane.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return nil, fmt.Errorf("failed to add user %s: %w", name, err)
	}
	return rest.CopyConfig(u.Config()), nil
}
