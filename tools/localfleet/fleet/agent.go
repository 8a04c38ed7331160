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
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/flotilla-io/flotilla/tools/localfleet/balancer"
)

// joinMember does what a user does: `hub token create` on the hub, then the
// printed `agent join` against the member, then starts `agent run`.
func (f *Fleet) joinMember(ctx context.Context, st *State, m Member) error {
	var tokenArgs []string
	if len(m.Labels) > 0 {
		tokenArgs = append(tokenArgs, "--labels", formatLabels(m.Labels))
	}
	if err := f.join(ctx, st, m.Name, tokenArgs...); err != nil {
		return err
	}
	return f.startAgent(ctx, st, m.Name)
}

// join runs `hub token create` for the member (with tokenArgs, such as --labels)
// and the `agent join` command it prints. Behind the tunnel balancer, the
// member dials a listener of its own there, so that the balancer can partition
// it alone (balancer.Client.Block).
func (f *Fleet) join(ctx context.Context, st *State, member string, tokenArgs ...string) error {
	if st.BalancerControlAddress != "" {
		addr, err := balancer.Client{Address: st.BalancerControlAddress}.MemberAddress(ctx, member, "")
		if err != nil {
			return err
		}
		tokenArgs = append(tokenArgs, "--hub-address", addr)
	}
	args := append([]string{"token", "create", "--kubeconfig", f.HubServiceAccountKubeconfig(),
		"--ttl", "1h", "--name", member, "--member-kubeconfig", f.MemberKubeconfig(member)}, tokenArgs...)
	out, err := run(ctx, nil, f.hubBinary, args...)
	if err != nil {
		return err
	}
	join := strings.Fields(strings.TrimSpace(out))
	if len(join) < 2 || join[0] != "agent" || join[1] != "join" {
		return fmt.Errorf("hub token create printed %q, not an agent join command", out)
	}
	cmd := exec.CommandContext(ctx, f.agentBinary, join[1:]...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("agent join failed: %w: %s", err, strings.TrimSpace(string(b)))
	}
	return nil
}

func formatLabels(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+labels[k])
	}
	return strings.Join(parts, ",")
}

func agentRole(member string) string { return "agent/" + member }

// startAgent runs `agent run` for a joined member as a local process, with
// the fleet's AgentArgs and then extra.
func (f *Fleet) startAgent(ctx context.Context, st *State, member string, extra ...string) error {
	if p, ok := st.Processes[agentRole(member)]; ok && p.running() {
		return fmt.Errorf("the agent of %s is already running (pid %d)", member, p.PID)
	}
	metrics, err := freeAddress()
	if err != nil {
		return err
	}
	health, err := freeAddress()
	if err != nil {
		return err
	}
	args := append([]string{"run", "--kubeconfig", f.MemberKubeconfig(member),
		"--metrics-bind-address", metrics, "--health-probe-bind-address", health}, f.opts.AgentArgs...)
	args = append(args, extra...)
	p, err := startProcess(f.agentBinary, args, filepath.Join(f.LogDir(), "agent-"+member+".log"), nil)
	if err != nil {
		return err
	}
	st.Processes[agentRole(member)] = p
	if err := f.saveState(st); err != nil {
		return err
	}
	if err := f.writeScrapeTargets(st); err != nil {
		return err
	}
	// Watch the first seconds, when a bad identity or flag makes the agent exit.
	select {
	case <-p.exited:
		return fmt.Errorf("the agent of %s exited at start; see %s", member, p.LogFile)
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(2 * time.Second):
		return nil
	}
}

// StopAgent kills one member's agent (for fault tests).
func (f *Fleet) StopAgent(ctx context.Context, member string) error {
	st, err := f.loadState()
	if err != nil {
		return err
	}
	if st.Provider == ProviderKind {
		return f.scaleKindAgent(ctx, st, member, 0)
	}
	p, ok := st.Processes[agentRole(member)]
	if !ok {
		return fmt.Errorf("no agent was started for %q", member)
	}
	if err := stopProcess(ctx, p, 10*time.Second); err != nil {
		return err
	}
	delete(st.Processes, agentRole(member))
	return f.saveState(st)
}

// StartAgent starts one member's agent again.
func (f *Fleet) StartAgent(ctx context.Context, member string) error {
	return f.StartAgentWithArgs(ctx, member)
}

// StartAgentWithArgs starts one member's agent again with more flags after
// the fleet's AgentArgs (such as --proxy=false); StartAgent, after StopAgent,
// starts it without them. Kwok fleets only when extra is not empty.
func (f *Fleet) StartAgentWithArgs(ctx context.Context, member string, extra ...string) error {
	st, err := f.loadState()
	if err != nil {
		return err
	}
	if !memberKnown(st, member) {
		return fmt.Errorf("%q is not a member of this fleet", member)
	}
	if st.Provider == ProviderKind {
		if len(extra) > 0 {
			return fmt.Errorf("the agents of a %s fleet run as Deployments: start one with flags %v on %s fleets only", ProviderKind, extra, ProviderKwok)
		}
		return f.scaleKindAgent(ctx, st, member, 1)
	}
	if f.bin == "" {
		return fmt.Errorf("the fleet has no binaries")
	}
	return f.startAgent(ctx, st, member, extra...)
}

func memberKnown(st *State, member string) bool {
	if member == HubMemberName && st.HubAsMember {
		return true
	}
	for _, m := range st.Members {
		if m.Name == member {
			return true
		}
	}
	return false
}
