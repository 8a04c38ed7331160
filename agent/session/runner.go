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
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/util/workqueue"

	"github.com/flotilla-io/flotilla/agent/apply"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// DialFunc opens a session to the hub, for example with tunnel.Dial.
type DialFunc func(ctx context.Context) (*tunnel.ClientSession, error)

// shutdownReason is the Goodbye the agent sends when it stops.
const shutdownReason = "agent is shutting down"

// Runner keeps the agent's tunnel to the hub and serves it. Create it with
// New and call Run once.
type Runner struct {
	opts    Options
	log     logr.Logger
	started atomic.Bool
	// running is set once the queue exists, for Changed.
	running atomic.Bool

	// queue holds the names of Works with something to do (workState.next);
	// a name is never processed by two workers at once.
	queue workqueue.TypedRateLimitingInterface[string]

	mu sync.Mutex
	// works is the state of every Work the agent knows, across sessions.
	works map[string]*workState
	// records are the Works the member held at the last inventory.
	records map[string]apply.Record
	// current is the established session, nil between sessions.
	current *tunnel.ClientSession
	// lastExchange is when the agent sent the last heartbeat the hub
	// acknowledged, on the monotonic clock; Run's start until then. Fenced
	// Works count their lease from it (fence.go).
	lastExchange time.Time
	// startedAt is when Run started: lastExchange until the first exchange.
	startedAt time.Time
	// restored are the fenced Works the agent knows only from their records
	// (it restarted and has had no session since), by name; restoreDone is
	// set once the records and the saved exchange were read, or a session's
	// inventory made that moot (fence.go).
	restored    map[string]*restoredWork
	restoreDone bool
	// savedExchange is the exchange time last saved on the member.
	savedExchange time.Time

	// sendMu serialises status reports, so that the last one sent for a Work
	// is its newest status.
	sendMu sync.Mutex
}

// New returns a Runner.
func New(opts Options) (*Runner, error) {
	if opts.Applier == nil {
		return nil, errors.New("session: Options.Applier is required")
	}
	return &Runner{opts: opts, works: map[string]*workState{}, records: map[string]apply.Record{}}, nil
}

// Run keeps a session to the hub open until ctx is done: it dials with dial,
// serves the session, and redials with backoff when the dial fails or the
// session ends (see tunnel.RunWithReconnect, which reconnect configures). When
// ctx is done it says Goodbye to the hub, closes the session, waits for
// in-flight work to stop and returns nil. It returns an error only for a
// permanent failure.
func (r *Runner) Run(ctx context.Context, dial DialFunc, reconnect tunnel.ReconnectOptions) error {
	if !r.started.CompareAndSwap(false, true) {
		return errors.New("session: Runner.Run called twice")
	}
	if err := r.opts.complete(ctx); err != nil {
		return err
	}
	r.log = r.opts.Logger
	// The Applier logs through the context's logger.
	ctx = logr.NewContext(ctx, r.log)
	r.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](r.opts.RetryInitialInterval, r.opts.RetryMaxInterval),
		workqueue.TypedRateLimitingQueueConfig[string]{})
	r.running.Store(true)
	r.mu.Lock()
	r.lastExchange = time.Now()
	r.startedAt = r.lastExchange
	r.mu.Unlock()

	var wg sync.WaitGroup
	for range r.opts.MaxConcurrentApplies {
		wg.Go(func() {
			for r.processNext(ctx) {
			}
		})
	}
	// The background loops end when Run returns, also when it returns with
	// the agent's context live (a permanent refusal): Run waits for them.
	loopCtx, stopLoops := context.WithCancel(ctx)
	if !r.opts.ChangesWatched {
		wg.Go(func() { r.recheckLoop(loopCtx) })
	}
	wg.Go(func() { r.fenceLoop(loopCtx) })
	defer func() {
		stopLoops()
		r.queue.ShutDown()
		wg.Wait()
	}()

	onStateChange := reconnect.OnStateChange
	reconnect.OnStateChange = func(state tunnel.ConnState, err error) {
		r.opts.Metrics.setConnected(state == tunnel.StateConnected)
		if onStateChange != nil {
			onStateChange(state, err)
		}
	}
	if reconnect.Logger.GetSink() == nil {
		reconnect.Logger = r.log
	}
	return tunnel.RunWithReconnect(ctx, dial, func(sctx context.Context, s *tunnel.ClientSession) error {
		return r.serve(ctx, sctx, s)
	}, reconnect)
}

// serve runs one session until it ends or the agent stops (ctx is the
// agent's context, sctx the session's).
func (r *Runner) serve(ctx, sctx context.Context, s *tunnel.ClientSession) error {
	ack := s.HelloAck()
	period := time.Duration(ack.HeartbeatPeriodSeconds) * time.Second
	if period <= 0 {
		period = r.opts.DefaultHeartbeatPeriod
	}
	log := r.log.WithValues("hub", s.RemoteAddr().String(), "hubReplica", ack.HubReplica)
	log.Info("Connected to the hub", "heartbeatPeriod", period)

	r.setSession(s)
	defer r.clearSession(s)

	c := &conn{s: s, log: log, period: period}
	c.lastAck.Store(time.Now().UnixNano())
	if r.opts.APIProxy != nil && s.HasCapability(tunnel.CapabilityAPIProxy) {
		// The proxy does not end the session: it ends with it.
		l := s.APIProxyListener()
		proxyDone := make(chan error, 1)
		go func() { proxyDone <- r.opts.APIProxy.Serve(sctx, l) }()
		defer func() {
			_ = l.Close()
			if err := <-proxyDone; err != nil {
				log.Error(err, "The API proxy failed")
			}
		}()
	}
	loops := []func(context.Context, *conn) error{r.heartbeatLoop, r.controlLoop, r.workLoop}
	errc := make(chan error, len(loops))
	for _, loop := range loops {
		go func() { errc <- loop(sctx, c) }()
	}
	var err error
	pending := len(loops)
	select {
	case err = <-errc:
		pending--
	case <-sctx.Done():
	}
	if ctx.Err() != nil {
		_ = s.CloseWithReason(shutdownReason)
		log.Info("Closed the session to the hub: the agent is stopping")
	} else {
		_ = s.Close()
	}
	for ; pending > 0; pending-- {
		<-errc //nolint:errcheck // waiting for the goroutines to end; s.Err() below says why the session ended
	}
	if err == nil {
		err = s.Err()
	}
	return err
}

// conn is one established session.
type conn struct {
	s   *tunnel.ClientSession
	log logr.Logger
	// period is the heartbeat period.
	period time.Duration
	// lastAck is when the hub last acknowledged a heartbeat (Unix ns); the
	// session's start until it does.
	lastAck atomic.Int64

	// sentMu guards sent: when each heartbeat not acknowledged yet was sent,
	// by sequence, on the monotonic clock.
	sentMu sync.Mutex
	sent   map[uint64]time.Time
}

// heartbeatSent records when heartbeat seq was sent.
func (c *conn) heartbeatSent(seq uint64, at time.Time) {
	c.sentMu.Lock()
	defer c.sentMu.Unlock()
	if c.sent == nil {
		c.sent = map[uint64]time.Time{}
	}
	c.sent[seq] = at
}

// acknowledged returns when the acknowledged heartbeat seq was sent, and
// forgets it and every earlier one.
func (c *conn) acknowledged(seq uint64) (time.Time, bool) {
	c.sentMu.Lock()
	defer c.sentMu.Unlock()
	at, ok := c.sent[seq]
	for s := range c.sent {
		if s <= seq {
			delete(c.sent, s)
		}
	}
	return at, ok
}

func (r *Runner) setSession(s *tunnel.ClientSession) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.current = s
	for _, st := range r.works {
		st.sent = "" // nothing was reported in this session yet
	}
}

// Redial ends the current session, if any, so that the Runner dials again
// at once (after a certificate renewal, to connect with the new identity).
// The hub is told why.
func (r *Runner) Redial(reason string) {
	r.mu.Lock()
	s := r.current
	r.mu.Unlock()
	if s != nil {
		r.log.Info("Reconnecting to the hub", "reason", reason)
		_ = s.CloseWithReason(reason)
	}
}

func (r *Runner) clearSession(s *tunnel.ClientSession) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.current == s {
		r.current = nil
	}
}

// heartbeatLoop sends a heartbeat at once and then every period, with the
// last known properties, and drops the session when the hub stops
// acknowledging them.
func (r *Runner) heartbeatLoop(ctx context.Context, c *conn) error {
	t := time.NewTicker(c.period)
	defer t.Stop()
	limit := time.Duration(r.opts.MissedAcks) * c.period
	for seq := uint64(1); ; seq++ {
		sentAt := time.Now()
		hb := tunnel.Heartbeat{Sequence: seq, SentAt: sentAt.UTC(), Properties: r.opts.Properties.Latest()}
		c.heartbeatSent(seq, sentAt)
		if err := c.s.Control().Send(hb); err != nil {
			return fmt.Errorf("failed to send a heartbeat: %w", err)
		}
		r.opts.Metrics.heartbeatSent()
		c.log.V(2).Info("Sent a heartbeat", "sequence", seq)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if silent := time.Since(time.Unix(0, c.lastAck.Load())); silent > limit {
			return fmt.Errorf("the hub acknowledged no heartbeat for %s (%d periods)", silent.Round(time.Second), r.opts.MissedAcks)
		}
	}
}

// controlLoop reads the control stream: heartbeat acknowledgements and the
// hub's Goodbye.
func (r *Runner) controlLoop(_ context.Context, c *conn) error {
	for {
		m, err := c.s.Control().Recv()
		if err != nil {
			return err
		}
		switch m := m.(type) {
		case tunnel.HeartbeatAck:
			c.lastAck.Store(time.Now().UnixNano())
			if sent, ok := c.acknowledged(m.Sequence); ok {
				r.exchanged(sent)
			}
		case tunnel.Goodbye:
			c.log.Info("The hub closed the session", "reason", m.Reason)
			return fmt.Errorf("the hub said goodbye: %s", m.Reason)
		default:
			c.log.V(1).Info("Ignoring a control message", "type", m.FrameType().String())
		}
	}
}
