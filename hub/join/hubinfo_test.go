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

package join_test

import (
	"testing"

	"github.com/flotilla-io/flotilla/hub/tunnelserver"
	joinproto "github.com/flotilla-io/flotilla/pkg/join"
)

// The agent, which does not link the hub, reads the hub's info ConfigMap by the
// names pkg/join gives it (`agent join --hub-as-member`); they must be the ones the
// hub writes.
func TestTheAgentReadsTheHubInfoTheHubWrites(t *testing.T) {
	if joinproto.HubInfoConfigMap != tunnelserver.InfoConfigMapName {
		t.Errorf("pkg/join.HubInfoConfigMap = %q, the hub writes %q", joinproto.HubInfoConfigMap, tunnelserver.InfoConfigMapName)
	}
	if joinproto.HubInfoKeyCAHash != tunnelserver.InfoKeyCAHash {
		t.Errorf("pkg/join.HubInfoKeyCAHash = %q, the hub writes %q", joinproto.HubInfoKeyCAHash, tunnelserver.InfoKeyCAHash)
	}
}
