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

package tunnelserver

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

func TestDisconnectAfter(t *testing.T) {
	const grace = 5 * time.Second
	overdue, noHeartbeat := heartbeatOverdue(time.Unix(0, 0), time.Unix(16, 0), grace, 3)
	if !overdue {
		t.Fatal("heartbeatOverdue: want overdue")
	}
	for _, tc := range []struct {
		name  string
		end   SessionEnd
		grace time.Duration
		want  EndVerdict
	}{
		{"an agent that hung up waits out the grace", SessionEnd{Reason: "session ended"}, grace, EndVerdict{Wait: grace}},
		{"a broken connection waits out the grace", SessionEnd{Reason: "tunnel: session closed"}, grace, EndVerdict{Wait: grace}},
		{"part of the grace waited waits the rest", SessionEnd{Reason: "session ended", Waited: 2 * time.Second}, grace, EndVerdict{Wait: 3 * time.Second}},
		{"the grace waited out without a reconnect writes", SessionEnd{Reason: "session ended", Waited: grace}, grace, EndVerdict{Write: true}},
		{"a reconnect within the grace writes nothing", SessionEnd{Reason: "session ended", Waited: grace, Reconnected: true}, grace, EndVerdict{}},
		{"no grace writes at once", SessionEnd{Reason: "session ended"}, 0, EndVerdict{Write: true}},
		{"missed heartbeats write at once: the hub has heard nothing for periods", SessionEnd{Reason: noHeartbeat}, grace, EndVerdict{Write: true}},
		{"a stopping replica writes nothing", SessionEnd{Reason: "session ended", Stopping: true}, grace, EndVerdict{}},
		{"a replica that began stopping during the grace writes nothing", SessionEnd{Reason: "session ended", Waited: time.Second, Stopping: true}, grace, EndVerdict{}},
		{"a stopping replica writes nothing even after missed heartbeats", SessionEnd{Reason: noHeartbeat, Stopping: true}, grace, EndVerdict{}},
		{"a replica that cannot renew its Lease waits until it can", SessionEnd{Reason: "session ended", StandingLost: true}, grace, EndVerdict{WaitForStanding: true}},
		{"a replica that cannot renew its Lease waits even after missed heartbeats", SessionEnd{Reason: noHeartbeat, StandingLost: true}, grace, EndVerdict{WaitForStanding: true}},
		{"a replica that cannot renew its Lease waits even past the grace", SessionEnd{Reason: "session ended", Waited: time.Minute, StandingLost: true}, grace, EndVerdict{WaitForStanding: true}},
		{"a stopping replica that cannot renew its Lease writes nothing", SessionEnd{Reason: "session ended", Stopping: true, StandingLost: true}, grace, EndVerdict{}},
		{"a replica that renewed again after the grace writes", SessionEnd{Reason: "session ended", Waited: time.Minute}, grace, EndVerdict{Write: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, disconnectAfter(tc.end, tc.grace)); diff != "" {
				t.Errorf("disconnectAfter(%+v, %s) (-want +got):\n%s", tc.end, tc.grace, diff)
			}
		})
	}
}

// An agent that reconnects within the grace leaves the member's status as it
// was (AgentConnected True throughout, no disconnection Event); one that does
// not is recorded disconnected once the grace has passed, not before.
func TestAnAgentThatReconnectsWithinTheGraceIsNeverRecordedDisconnected(t *testing.T) {
	const grace = 3 * time.Second
	addr := startServerWith(t, Options{ReplicaName: "grace", DisconnectGrace: grace})
	cert, pool := joinMember(t, addr, "graceful")
	connected := func() error {
		c := conditions.Get(member(t, "graceful").Status.Conditions, clusterv1beta1.ConditionAgentConnected)
		if c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("AgentConnected: %+v", c)
		}
		return nil
	}
	s := connect(t, addr, "graceful", cert, pool)
	testenv.Eventually(t, 10*time.Second, connected)

	before := conditions.Get(member(t, "graceful").Status.Conditions, clusterv1beta1.ConditionAgentConnected).LastTransitionTime

	// A restart: hang up, dial again within the grace.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(grace / 3) // the agent's restart takes a moment
	s = connect(t, addr, "graceful", cert, pool)
	deadline := time.Now().Add(2 * grace)
	for time.Now().Before(deadline) {
		if err := connected(); err != nil {
			t.Fatalf("an agent back within the grace was recorded disconnected: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if after := conditions.Get(member(t, "graceful").Status.Conditions, clusterv1beta1.ConditionAgentConnected).LastTransitionTime; !after.Equal(&before) {
		t.Errorf("AgentConnected changed during a restart within the grace: last transition %s, was %s", after, before)
	}

	// A stop: nothing before the grace, AgentDisconnected after it.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	testenv.Eventually(t, 10*time.Second, func() error {
		c := conditions.Get(member(t, "graceful").Status.Conditions, clusterv1beta1.ConditionAgentConnected)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != clusterv1beta1.ReasonAgentDisconnected {
			return fmt.Errorf("AgentConnected: %+v", c)
		}
		return nil
	})
	if d := time.Since(stopped); d < grace {
		t.Errorf("recorded disconnected %s after the agent stopped, want no sooner than the grace (%s)", d, grace)
	}
}
