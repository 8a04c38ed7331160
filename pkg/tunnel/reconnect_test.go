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

package tunnel

import (
	"context"
	"crypto/x509"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/google/go-cmp/cmp"
)

// stateRecorder records RunWithReconnect's state changes.
type stateRecorder struct {
	mu     sync.Mutex
	states []string
}

func (r *stateRecorder) record(state ConnState, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := state.String()
	if errors.Is(err, ErrRefused) {
		s += " (refused)"
	}
	r.states = append(r.states, s)
}

func (r *stateRecorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.states...)
}

func fastReconnect(r *stateRecorder) ReconnectOptions {
	return ReconnectOptions{
		InitialInterval: 5 * time.Millisecond,
		MaxInterval:     20 * time.Millisecond,
		OnStateChange:   r.record,
	}
}

func tcpTransport(t *testing.T) transport {
	for _, tr := range transports(t) {
		if tr.name == "tcp" {
			return tr
		}
	}
	t.Fatal("no tcp transport")
	return transport{}
}

func TestRunWithReconnectRetriesUntilAccepted(t *testing.T) {
	var attempts atomic.Int32
	h := startHarness(t, tcpTransport(t), ServerOptions{
		Authorize: func(_ context.Context, hello Hello, _ *x509.Certificate) (HelloAck, error) {
			if attempts.Add(1) <= 2 {
				return HelloAck{}, errors.New("not yet")
			}
			return HelloAck{}, nil
		},
	})

	rec := &stateRecorder{}
	connected := make(chan *ClientSession)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- RunWithReconnect(ctx,
			func(context.Context) (*ClientSession, error) { return h.connect("member-1") },
			func(ctx context.Context, s *ClientSession) error {
				connected <- s
				<-ctx.Done() // until the session closes or RunWithReconnect stops
				return nil
			},
			fastReconnect(rec))
	}()

	receive(t, connected, "the first session")
	server := h.nextSession()
	want := []string{"Connecting", "Disconnected (refused)", "Connecting", "Disconnected (refused)", "Connecting", "Connected"}
	if diff := cmp.Diff(want, rec.get()); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}

	// The hub drops the session: run's context ends and the agent
	// reconnects.
	_ = server.Close()
	receive(t, connected, "the second session")
	want = append(want, "Disconnected", "Connecting", "Connected")
	if diff := cmp.Diff(want, rec.get()); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}

	cancel()
	if err := receive(t, done, "RunWithReconnect to return"); err != nil {
		t.Errorf("RunWithReconnect = %v, want nil after its context ended", err)
	}
}

func TestRunWithReconnectStopsOnPermanentError(t *testing.T) {
	boom := errors.New("this agent was removed from the fleet")
	rec := &stateRecorder{}
	var dials atomic.Int32
	err := RunWithReconnect(t.Context(),
		func(context.Context) (*ClientSession, error) {
			if dials.Add(1) < 3 {
				return nil, errors.New("connection refused")
			}
			return nil, backoff.Permanent(boom)
		},
		func(context.Context, *ClientSession) error { t.Error("run called without a session"); return nil },
		fastReconnect(rec))
	if !errors.Is(err, boom) {
		t.Errorf("RunWithReconnect = %v, want %v", err, boom)
	}
	want := []string{"Connecting", "Disconnected", "Connecting", "Disconnected", "Connecting", "Disconnected"}
	if diff := cmp.Diff(want, rec.get()); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
}

func TestRunWithReconnectStopsWhenContextEndsDuringBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	err := RunWithReconnect(ctx,
		func(context.Context) (*ClientSession, error) {
			cancel()
			return nil, errors.New("connection refused")
		},
		func(context.Context, *ClientSession) error { return nil },
		ReconnectOptions{InitialInterval: time.Hour})
	if err != nil {
		t.Errorf("RunWithReconnect = %v, want nil", err)
	}
}

func TestReconnectOptionsDefaults(t *testing.T) {
	got := ReconnectOptions{}.complete(context.Background())
	want := ReconnectOptions{
		InitialInterval:     500 * time.Millisecond,
		MaxInterval:         30 * time.Second,
		Multiplier:          2,
		RandomizationFactor: 0.5,
		ResetAfter:          time.Minute,
	}
	if diff := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Logger" }, cmp.Ignore())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
