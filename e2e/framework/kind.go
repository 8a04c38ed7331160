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
	"fmt"
	"os"
	"os/exec"

	"github.com/flotilla-io/flotilla/tools/localfleet/fleet"
)

// ProviderEnvVar selects the clusters the suites run on: kwok (the default) or
// kind (make e2e-kind), through the local fleet's providers.
const ProviderEnvVar = "FLOTILLA_E2E_PROVIDER"

// ProviderFromEnv is the fleet provider $FLOTILLA_E2E_PROVIDER names, kwok by default.
func ProviderFromEnv() string {
	if p := os.Getenv(ProviderEnvVar); p != "" {
		return p
	}
	return fleet.ProviderKwok
}

// OnKind reports whether the fleet's clusters are kind clusters, where the hub
// and agents run as pods rather than local processes.
func (p *KwokProvider) OnKind() bool {
	st, err := p.State()
	return err == nil && st.Provider == fleet.ProviderKind
}

// NodeExec runs a command in a kind member's node container.
func (p *KwokProvider) NodeExec(ctx context.Context, member string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "podman", append([]string{"exec", p.KindNode(member)}, args...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("podman exec %s %v: %w: %s", p.KindNode(member), args, err, out)
	}
	return string(out), nil
}
