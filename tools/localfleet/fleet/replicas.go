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

package fleet

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"syscall"
	"time"

	"github.com/flotilla-io/flotilla/tools/localfleet/balancer"
)

// HubReplica is one hub process of the fleet.
type HubReplica struct {
	// Name is its --replica-name; Role its key in State.Processes and the
	// name of its log file.
	Name string `json:"name"`
	Role string `json:"role"`
	// TunnelAddress, MetricsAddress and HealthAddress are where it listens.
	TunnelAddress  string `json:"tunnelAddress"`
	MetricsAddress string `json:"metricsAddress"`
	HealthAddress  string `json:"healthAddress"`
	// ProxyAddress is where it serves the API proxy (apiproxy.go), on this
	// machine's non-loopback address; empty when its binary has no proxy.
	ProxyAddress string `json:"proxyAddress,omitempty"`
}

// balancerRole is the tunnel balancer's key in State.Processes.
const balancerRole = "balancer"

// hubRole is replica i's key in State.Processes: "hub" for the first (as
// with a single hub), "hub-<i>" for the others.
func hubRole(i int) string {
	if i == 0 {
		return "hub"
	}
	return fmt.Sprintf("hub-%d", i)
}

func newHubReplica(i int) (HubReplica, error) {
	r := HubReplica{Name: fmt.Sprintf("localfleet-hub-%d", i), Role: hubRole(i)}
	for _, addr := range []*string{&r.TunnelAddress, &r.MetricsAddress, &r.HealthAddress} {
		var err error
		if *addr, err = freeAddress(); err != nil {
			return r, err
		}
	}
	return r, nil
}

// startBalancer runs `localfleet balance` in front of the replicas' tunnel
// ports; agents dial it.
func (f *Fleet) startBalancer(ctx context.Context, st *State) error {
	var err error
	if st.HubTunnelAddress, err = freeAddress(); err != nil {
		return err
	}
	if st.BalancerControlAddress, err = freeAddress(); err != nil {
		return err
	}
	args := []string{"balance", "--listen", st.HubTunnelAddress, "--control", st.BalancerControlAddress}
	for _, r := range st.HubReplicas {
		args = append(args, "--backend", r.TunnelAddress)
	}
	p, err := startProcess(filepath.Join(f.bin, "localfleet"), args, filepath.Join(f.LogDir(), "balancer.log"), nil)
	if err != nil {
		return err
	}
	st.Processes[balancerRole] = p
	if err := f.saveState(st); err != nil {
		return err
	}
	c := balancer.Client{Address: st.BalancerControlAddress}
	return waitFor(ctx, 20*time.Second, func() error {
		select {
		case <-p.exited:
			return fmt.Errorf("the tunnel balancer exited; see %s", p.LogFile)
		default:
		}
		_, err := c.Status(ctx)
		return err
	})
}

// Balancer returns the client of the tunnel balancer's control endpoint
// (cut, delay, backends, block and unblock a member), or an error if agents reach the hub directly.
func (f *Fleet) Balancer() (balancer.Client, error) {
	st, err := f.loadState()
	if err != nil {
		return balancer.Client{}, err
	}
	if st.BalancerControlAddress == "" {
		return balancer.Client{}, fmt.Errorf("the fleet has no tunnel balancer: create it with --hub-replicas 2 (or Options.TunnelBalancer)")
	}
	return balancer.Client{Address: st.BalancerControlAddress}, nil
}

// StopHubReplica stops hub replica i: with SIGKILL when kill (a crash: no
// goodbye, no status written, its Lease left to expire), else with SIGTERM.
func (f *Fleet) StopHubReplica(ctx context.Context, i int, kill bool) error {
	st, err := f.loadState()
	if err != nil {
		return err
	}
	if i < 0 || i >= len(st.HubReplicas) {
		return fmt.Errorf("the fleet has no hub replica %d", i)
	}
	p, ok := st.Processes[hubRole(i)]
	if !ok {
		return fmt.Errorf("hub replica %d is not running", i)
	}
	if kill && p.running() {
		_ = syscall.Kill(-p.PID, syscall.SIGKILL)
	}
	if err := stopProcess(ctx, p, 10*time.Second); err != nil {
		return err
	}
	delete(st.Processes, hubRole(i))
	return f.saveState(st)
}

// StartHubReplica starts hub replica i again, or a new one when i is the
// number of replicas (it is then added to the balancer's backends).
func (f *Fleet) StartHubReplica(ctx context.Context, i int) error {
	st, err := f.loadState()
	if err != nil {
		return err
	}
	switch {
	case i == len(st.HubReplicas):
		if st.BalancerControlAddress == "" {
			return fmt.Errorf("a hub replica can be added only behind the tunnel balancer")
		}
		r, err := newHubReplica(i)
		if err != nil {
			return err
		}
		if first := st.HubReplicas[0].ProxyAddress; first != "" {
			// It serves the proxy too, for the members whose tunnel it
			// holds; Service flotilla-hub points at the first replica only.
			host, _, _ := net.SplitHostPort(first)
			if r.ProxyAddress, err = freeHostAddress(host); err != nil {
				return err
			}
		}
		st.HubReplicas = append(st.HubReplicas, r)
		if err := f.saveState(st); err != nil {
			return err
		}
	case i < 0 || i > len(st.HubReplicas):
		return fmt.Errorf("the fleet has no hub replica %d", i)
	}
	if p, ok := st.Processes[hubRole(i)]; ok && p.running() {
		return fmt.Errorf("hub replica %d is already running (pid %d)", i, p.PID)
	}
	if err := f.startHubReplica(ctx, st, i); err != nil {
		return err
	}
	if st.BalancerControlAddress == "" {
		return nil
	}
	addrs := make([]string, 0, len(st.HubReplicas))
	for _, r := range st.HubReplicas {
		addrs = append(addrs, r.TunnelAddress)
	}
	return balancer.Client{Address: st.BalancerControlAddress}.SetBackends(ctx, addrs)
}

// RemoveHubReplica stops the last hub replica (i must be the last) and
// forgets it, taking it out of the balancer.
func (f *Fleet) RemoveHubReplica(ctx context.Context, i int) error {
	st, err := f.loadState()
	if err != nil {
		return err
	}
	if i != len(st.HubReplicas)-1 || i == 0 {
		return fmt.Errorf("only the last hub replica, not the first, can be removed (there are %d)", len(st.HubReplicas))
	}
	if p, ok := st.Processes[hubRole(i)]; ok {
		if err := stopProcess(ctx, p, 10*time.Second); err != nil {
			return err
		}
		delete(st.Processes, hubRole(i))
	}
	st.HubReplicas = st.HubReplicas[:i]
	if err := f.saveState(st); err != nil {
		return err
	}
	addrs := make([]string, 0, len(st.HubReplicas))
	for _, r := range st.HubReplicas {
		addrs = append(addrs, r.TunnelAddress)
	}
	return balancer.Client{Address: st.BalancerControlAddress}.SetBackends(ctx, addrs)
}
