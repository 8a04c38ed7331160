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
	"time"
)

// HubMemberName is the member name the hub cluster joins its own fleet as.
const HubMemberName = "hub"

// hubMemberRole is the process role of the hub member's agent.
var hubMemberRole = agentRole(HubMemberName)

// JoinHubAsMember joins the hub cluster as member HubMemberName, the way a user
// does: `hub token create --hub-as-member`, the printed `agent join
// --hub-as-member` with the hub cluster's kubeconfig, then `agent run` against
// it. The hub labels the member cluster.flotilla.io/hub=true and taints it
// cluster.flotilla.io/hub:NoSchedule. Kwok fleets only.
func (f *Fleet) JoinHubAsMember(ctx context.Context) error {
	st, err := f.loadState()
	if err != nil {
		return err
	}
	if st.Provider == ProviderKind {
		return fmt.Errorf("the hub joins as a member on %s fleets only", ProviderKwok)
	}
	return f.joinHubAsMember(ctx, st)
}

func (f *Fleet) joinHubAsMember(ctx context.Context, st *State) error {
	if st.HubAsMember {
		return fmt.Errorf("the hub is already joined as member %s", HubMemberName)
	}
	if err := f.join(ctx, st, HubMemberName, "--hub-as-member"); err != nil {
		return err
	}
	st.HubAsMember = true
	if err := f.saveState(st); err != nil {
		return err
	}
	return f.startAgent(ctx, st, HubMemberName)
}

// LeaveHubAsMember undoes JoinHubAsMember: it stops the hub member's agent and
// runs `agent leave` against the hub cluster, which removes what the agent
// applied there and tells the hub to forget member HubMemberName.
func (f *Fleet) LeaveHubAsMember(ctx context.Context) error {
	st, err := f.loadState()
	if err != nil {
		return err
	}
	if !st.HubAsMember {
		return fmt.Errorf("the hub is not joined as a member")
	}
	if p, ok := st.Processes[hubMemberRole]; ok {
		if err := stopProcess(ctx, p, 10*time.Second); err != nil {
			return fmt.Errorf("failed to stop the agent of %s: %w", HubMemberName, err)
		}
		delete(st.Processes, hubMemberRole)
	}
	if _, err := run(ctx, nil, f.agentBinary, "leave", "--kubeconfig", f.HubKubeconfig()); err != nil {
		return err
	}
	st.HubAsMember = false
	return f.saveState(st)
}
