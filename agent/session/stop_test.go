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

package session_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/flotilla-io/flotilla/agent/apply"
	"github.com/flotilla-io/flotilla/agent/session"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// TestRunReturnsAPermanentErrorWhileTheAgentRuns: a hub that refuses the
// agent for good (a version beyond the supported skew) ends Run with that
// error while the agent's context is still live, so that the agent exits
// with its one line. Run's background loops (recheck, fencing) end with it;
// before they did, Run waited for them until the agent was killed.
func TestRunReturnsAPermanentErrorWhileTheAgentRuns(t *testing.T) {
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	applier, err := apply.New(env.Config, apply.Options{Namespace: fmt.Sprintf("records-%d", time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	for _, watched := range []bool{true, false} {
		r, err := session.New(session.Options{Applier: applier, ChangesWatched: watched})
		if err != nil {
			t.Fatal(err)
		}
		refused := fmt.Errorf("%w: agent v0.7.0 and hub v0.5.0", tunnel.ErrIncompatiblePeer)
		dial := func(context.Context) (*tunnel.ClientSession, error) { return nil, backoff.Permanent(refused) }
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx, dial, tunnel.ReconnectOptions{InitialInterval: 10 * time.Millisecond}) }()
		select {
		case err := <-done:
			if !errors.Is(err, tunnel.ErrIncompatiblePeer) {
				t.Errorf("ChangesWatched=%v: Run returned %v, want the refusal", watched, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("ChangesWatched=%v: Run did not return within 30s of a permanent refusal, with the agent's context live", watched)
		}
	}
}
