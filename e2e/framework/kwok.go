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

package framework

import (
	"context"

	"github.com/flotilla-io/flotilla/tools/localfleet/fleet"
)

// KwokProvider runs the suites on a local fleet of kwok clusters (tools/localfleet):
// real kube-apiservers, etcd, controller-managers and schedulers with fake nodes.
// With fleet.Options.Provider set to kind, the same fleet runs on kind clusters.
type KwokProvider struct {
	*fleet.Fleet
}

var _ Provider = (*KwokProvider)(nil)

// NewKwokProvider prepares a fleet in dir; Up creates it.
func NewKwokProvider(opts fleet.Options) (*KwokProvider, error) {
	f, err := fleet.New(opts)
	if err != nil {
		return nil, err
	}
	return &KwokProvider{Fleet: f}, nil
}

// Members lists the member names the fleet was created with.
func (p *KwokProvider) Members() []string {
	st, err := p.State()
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(st.Members))
	for _, m := range st.Members {
		names = append(names, m.Name)
	}
	return names
}

// Up creates the fleet.
func (p *KwokProvider) Up(ctx context.Context) error { return p.Fleet.Up(ctx) }

// Down removes the fleet.
func (p *KwokProvider) Down(ctx context.Context) error { return p.Fleet.Down(ctx) }
