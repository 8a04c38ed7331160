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

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// disconnectGrace is the hub's --disconnect-grace (its default, one heartbeat
// period): how long after an agent's session ends its member's placements
// keep their last status.
const disconnectGrace = tunnel.DefaultHeartbeatPeriod

// agentDisconnected returns a poll that succeeds once the placement reports
// member's Applied and Available as Unknown (AgentDisconnected), and its summary
// too, naming member.
func agentDisconnected(ctx context.Context, t *testing.T, name, member string) func() error {
	hub := hubClient(t)
	return func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Name: name}, crp); err != nil {
			return err
		}
		for _, typ := range []string{placementv1beta1.ConditionApplied, placementv1beta1.ConditionAvailable} {
			found := false
			for _, pcs := range crp.Status.PlacementStatuses {
				if pcs.ClusterName != member {
					continue
				}
				found = true
				c := conditions.Get(pcs.Conditions, typ)
				if c == nil || c.Status != metav1.ConditionUnknown || c.Reason != placementv1beta1.ReasonAgentDisconnected {
					return fmt.Errorf("%s on %s: %+v", typ, member, c)
				}
			}
			if !found {
				return fmt.Errorf("no status for %s", member)
			}
			summary := conditions.Get(crp.Status.Conditions, placementv1beta1.ClusterResourcePlacementConditionType(typ))
			if summary == nil || summary.Status != metav1.ConditionUnknown || summary.Reason != placementv1beta1.ReasonAgentDisconnected ||
				!strings.Contains(summary.Message, member) {
				return fmt.Errorf("summary %s: %+v", typ, summary)
			}
		}
		return nil
	}
}

// Under a PickAll placement (which does not move), a member whose agent stops is
// reported Unknown (AgentDisconnected), per cluster and in the summary, not
// Applied and Available as it last was — once the hub's disconnect grace has
// passed, not before; once the agent is back, it is True again.
func TestAStoppedAgentsMemberIsReportedUnknownUntilItReturns(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	appNamespace(t, hub, "e2e-status")
	placeNamespace(t, hub, "e2e-status", "e2e-status", &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAll})
	members := []string{"member-1", "member-2", "member-3"}
	framework.Eventually(t, 3*time.Minute, framework.PlacementConditionsTrue(ctx, hub, "e2e-status", members...))

	const lost = "member-2"
	stopped := time.Now()
	if err := provider.StopAgent(ctx, lost); err != nil {
		t.Fatal(err)
	}
	restartAgentAtEnd(t, lost)
	framework.Eventually(t, 90*time.Second, agentDisconnected(ctx, t, "e2e-status", lost))
	after := time.Since(stopped)
	t.Logf("reported AgentDisconnected %s after %s's agent stopped (grace %s)", after.Round(100*time.Millisecond), lost, disconnectGrace)
	if after < disconnectGrace {
		t.Errorf("AgentDisconnected appeared %s after the agent stopped, within the hub's disconnect grace (%s)", after, disconnectGrace)
	}

	started := time.Now()
	if err := provider.StartAgent(ctx, lost); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, framework.PlacementConditionsTrue(ctx, hub, "e2e-status", members...))
	t.Logf("True again %s after %s's agent started", time.Since(started).Round(time.Second), lost)
}
