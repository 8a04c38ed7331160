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

package join

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/agent/apply"
	joinproto "github.com/flotilla-io/flotilla/pkg/join"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
	"github.com/flotilla-io/flotilla/pkg/version"
)

// Remover removes what the agent applied; *apply.Applier is one.
type Remover interface {
	// Inventory lists the Works the member holds.
	Inventory(ctx context.Context) ([]apply.Record, error)
	// RemoveWork removes what the named Work applied and returns what it
	// released instead of deleting (the rules of apply.Applier.RemoveWork).
	RemoveWork(ctx context.Context, workName string) ([]apply.Released, error)
}

var _ Remover = (*apply.Applier)(nil)

// LeaveOptions configure Leave.
type LeaveOptions struct {
	// Member connects to the member cluster. Required.
	Member *rest.Config
	// Remover removes the Works applied on the member. Required.
	Remover Remover
	// Timeout bounds the exchange with the hub. Default: DefaultTimeout.
	Timeout time.Duration
}

// LeaveResult says what Leave did.
type LeaveResult struct {
	// Identity is the identity the member left with.
	Identity *Identity
	// Removed are the Works whose objects were removed from the member.
	Removed []string
	// Released are the objects of those Works left on the member, and why:
	// objects the Works took over, Namespaces holding the member's own objects,
	// or everything with deleteStrategy Abandon.
	Released []apply.Released
}

// HubNotToldError is returned by Leave when everything was cleaned up on the
// member but the hub could not be told: the hub still lists the member.
type HubNotToldError struct {
	// Name is the member's name; Hub the hub's address.
	Name, Hub string
	// Err is why the hub could not be told.
	Err error
}

func (e *HubNotToldError) Error() string {
	return fmt.Sprintf("left the fleet on this cluster (Works removed, identity deleted), but the hub at %s could not be told: %v: run `kubectl delete membercluster %s` on the hub",
		e.Hub, e.Err, e.Name)
}

func (e *HubNotToldError) Unwrap() error { return e.Err }

// Leave takes the member out of the fleet: it removes every Work the agent
// applied, tells the hub over mutual TLS (so that only the member itself can
// ask), and deletes the identity. If the hub cannot be told, the member is
// still cleaned up and the error is a *HubNotToldError. Stop `agent run`
// first, or it keeps applying what the hub sends until the hub has forgotten
// the member.
func Leave(ctx context.Context, opts LeaveOptions) (*LeaveResult, error) {
	if opts.Member == nil || opts.Remover == nil {
		return nil, errors.New("join.Leave: Member and Remover are required")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	m, err := newMember(opts.Member)
	if err != nil {
		return nil, err
	}
	id, err := m.loadIdentity(ctx)
	if err != nil {
		if errors.Is(err, ErrNotJoined) {
			return nil, errors.New("this cluster has not joined a hub (no Secret " + Namespace + "/" + SecretName + "): nothing to leave")
		}
		return nil, err
	}
	res := &LeaveResult{Identity: id}

	records, err := opts.Remover.Inventory(ctx)
	if err != nil {
		return res, fmt.Errorf("failed to list the Works applied on this cluster (%w): fix access to the member and run `agent leave` again", err)
	}
	for _, r := range records {
		released, err := opts.Remover.RemoveWork(ctx, r.WorkName)
		res.Released = append(res.Released, released...)
		if err != nil {
			return res, fmt.Errorf("failed to remove Work %q from this cluster (%v): fix it and run `agent leave` again", r.WorkName, oneLine(err.Error()))
		}
		res.Removed = append(res.Removed, r.WorkName)
	}

	hubErr := tellHub(ctx, id, opts.Timeout)
	if err := m.deleteIdentity(ctx); err != nil {
		return res, err
	}
	if hubErr != nil {
		return res, &HubNotToldError{Name: id.Name, Hub: id.Hub, Err: hubErr}
	}
	return res, nil
}

// tellHub asks the hub to forget the member.
func tellHub(ctx context.Context, id *Identity, timeout time.Duration) error {
	cfg, err := id.TLSConfig(tunnel.ALPNJoin)
	if err != nil {
		return err
	}
	resp, err := exchange(ctx, id.Hub, timeout, cfg, joinproto.Request{
		Action:       joinproto.ActionLeave,
		ClusterName:  id.Name,
		AgentVersion: version.Version,
	})
	var unreachable *unreachableError
	if errors.As(err, &unreachable) {
		return fmt.Errorf("cannot reach it (%w)", unreachable.err)
	}
	if err != nil {
		return err
	}
	if resp.Error != "" {
		return fmt.Errorf("it refused (%s)", oneLine(resp.Error))
	}
	return nil
}
