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
