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
