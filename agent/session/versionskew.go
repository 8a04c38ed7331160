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

package session

import (
	"errors"

	"github.com/go-logr/logr"

	"github.com/flotilla-io/flotilla/pkg/tunnel"
	"github.com/flotilla-io/flotilla/pkg/version"
)

// Capabilities are the tunnel capabilities this agent announces in Hello
// (pkg/tunnel, Capability*). It requires none: a hub of the previous version,
// which announces none, must keep working (VERSIONING.md).
var Capabilities = []string{tunnel.CapabilityVersionSkew}

// CheckHub returns the agent's check of the hub's HelloAck
// (tunnel.ClientOptions.CheckHub): the version-skew rule of VERSIONING.md
// between agentVersion and HelloAck.HubVersion. A hub beyond the supported
// skew is an error, for a refusal too (the hub refused for the same reason);
// a pair that cannot be checked (a development build, a hub that announces
// no version) is accepted with a note in log.
func CheckHub(agentVersion string, log logr.Logger) func(tunnel.HelloAck) error {
	return func(ack tunnel.HelloAck) error {
		skew := version.CheckSkew(agentVersion, "agent", ack.HubVersion, "hub")
		if !skew.Compatible {
			return errors.New(skew.Message)
		}
		if skew.Message != "" && ack.Accepted {
			log.V(1).Info("Not checking the hub's version", "note", skew.Message)
		}
		return nil
	}
}

// Permanent reports whether a dial error will recur however often the agent
// redials the same hub: a version beyond the supported skew, or a capability
// the agent requires that the hub lacks. The agent stops on it rather than
// retry (VERSIONING.md).
func Permanent(err error) bool {
	return errors.Is(err, tunnel.ErrIncompatiblePeer) || errors.Is(err, tunnel.ErrMissingCapability)
}
