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
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/go-logr/logr"
)

// ConnState is the state of the agent's connection, as reported by
// RunWithReconnect.
type ConnState int

const (
	// StateConnecting: dialing the hub.
	StateConnecting ConnState = iota
	// StateConnected: a session is established and run is serving it.
	StateConnected
	// StateDisconnected: the dial failed or the session ended; the error
	// says why. RunWithReconnect waits for the backoff delay and dials again.
	StateDisconnected
)

func (s ConnState) String() string {
	switch s {
	case StateConnecting:
		return "Connecting"
	case StateConnected:
		return "Connected"
	case StateDisconnected:
		return "Disconnected"
	}
	return fmt.Sprintf("ConnState(%d)", int(s))
}

// Defaults for ReconnectOptions.
const (
	DefaultReconnectInitialInterval     = 500 * time.Millisecond
	DefaultReconnectMaxInterval         = 30 * time.Second
	DefaultReconnectMultiplier          = 2.0
	DefaultReconnectRandomizationFactor = 0.5
	DefaultReconnectResetAfter          = time.Minute
)

// ReconnectOptions configure RunWithReconnect.
type ReconnectOptions struct {
	// InitialInterval is the delay before the first redial. Default
	// DefaultReconnectInitialInterval (500ms).
	InitialInterval time.Duration
	// MaxInterval caps the delay. Default DefaultReconnectMaxInterval (30s).
	MaxInterval time.Duration
	// Multiplier grows the delay after each failure. Default
	// DefaultReconnectMultiplier (2).
	Multiplier float64
	// RandomizationFactor spreads each delay uniformly over
	// [d*(1-f), d*(1+f)] so that agents do not redial in step after a hub
	// restart. Default DefaultReconnectRandomizationFactor (0.5).
	RandomizationFactor float64
	// ResetAfter: a session that lived at least this long resets the delay
	// to InitialInterval; shorter sessions (a hub that accepts and then drops
	// the agent) keep growing it. Default DefaultReconnectResetAfter (1m).
	ResetAfter time.Duration
	// Logger receives a line per disconnection. Default: the logger in
	// RunWithReconnect's context, else none.
	Logger logr.Logger
	// OnStateChange, if set, is called synchronously on every state change,
	// with the error for StateDisconnected.
	OnStateChange func(state ConnState, err error)
}

func (o ReconnectOptions) complete(ctx context.Context) ReconnectOptions {
	if o.InitialInterval <= 0 {
		o.InitialInterval = DefaultReconnectInitialInterval
	}
	if o.MaxInterval <= 0 {
		o.MaxInterval = DefaultReconnectMaxInterval
	}
	if o.MaxInterval < o.InitialInterval {
		o.MaxInterval = o.InitialInterval
	}
	if o.Multiplier < 1 {
		o.Multiplier = DefaultReconnectMultiplier
	}
	if o.RandomizationFactor <= 0 || o.RandomizationFactor >= 1 {
		o.RandomizationFactor = DefaultReconnectRandomizationFactor
	}
	if o.ResetAfter <= 0 {
		o.ResetAfter = DefaultReconnectResetAfter
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.FromContextOrDiscard(ctx)
	}
	return o
}

// RunWithReconnect keeps the agent connected: it dials, calls run with the
// session, and when the dial fails or the session ends, waits with
// exponential backoff (jittered, capped, never giving up) and dials again.
//
// run's context is cancelled when ctx is done or the session closes; the
// session is closed when run returns. Whatever run returns (nil included),
// RunWithReconnect reconnects, unless ctx is done, or dial or run returned
// an error wrapped with backoff.Permanent, whose inner error it returns. It
// returns nil when ctx is done.
func RunWithReconnect(ctx context.Context, dial func(ctx context.Context) (*ClientSession, error), run func(ctx context.Context, s *ClientSession) error, opts ReconnectOptions) error {
	opts = opts.complete(ctx)
	b := &backoff.ExponentialBackOff{
		InitialInterval:     opts.InitialInterval,
		RandomizationFactor: opts.RandomizationFactor,
		Multiplier:          opts.Multiplier,
		MaxInterval:         opts.MaxInterval,
		MaxElapsedTime:      0, // never give up
		Stop:                backoff.Stop,
		Clock:               backoff.SystemClock,
	}
	b.Reset()
	notify := func(state ConnState, err error) {
		if opts.OnStateChange != nil {
			opts.OnStateChange(state, err)
		}
	}

	for failures := 0; ; {
		notify(StateConnecting, nil)
		sess, err := dial(ctx)
		if err == nil {
			notify(StateConnected, nil)
			started := time.Now()
			err = runSession(ctx, sess, run)
			if time.Since(started) >= opts.ResetAfter {
				b.Reset()
				failures = 0
			}
		}
		if ctx.Err() != nil {
			notify(StateDisconnected, ctx.Err())
			return nil
		}
		var permanent *backoff.PermanentError
		if errors.As(err, &permanent) {
			notify(StateDisconnected, permanent.Err)
			return permanent.Err
		}
		failures++
		delay := b.NextBackOff()
		notify(StateDisconnected, err)
		opts.Logger.Info("Tunnel to hub lost; reconnecting", "err", err, "delay", delay, "failures", failures)
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
	}
}

func runSession(ctx context.Context, sess *ClientSession, run func(ctx context.Context, s *ClientSession) error) error {
	defer func() { _ = sess.Close() }()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-sess.CloseChan():
			cancel()
		case <-sctx.Done():
		}
	}()
	err := run(sctx, sess)
	if err == nil {
		err = sess.Err()
	}
	if err == nil {
		err = errors.New("tunnel: session ended")
	}
	return err
}
