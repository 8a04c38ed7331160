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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/pki"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
	"github.com/flotilla-io/flotilla/pkg/workhash"
)

// memberSession is one member's live tunnel on this replica. Heartbeats are kept
// here, in memory (liveness is this session plus the replica's Lease);
// MemberCluster status is written from it only on transitions and when a
// property moves beyond its threshold (propertiesChanged), never on a timer.
type memberSession struct {
	name   string
	sess   *tunnel.ServerSession
	since  time.Time
	period time.Duration
	log    logr.Logger
	// serial is the session's certificate serial (pki.Serial).
	serial string
	// notAfter is when the session's certificate expires.
	notAfter time.Time
	// generation identifies the session in MemberCluster status
	// (AgentSession.Generation): its start in Unix nanoseconds.
	generation int64

	mu            sync.Mutex
	lastHeartbeat time.Time
	props         tunnel.ClusterProperties
	haveProps     bool
	// written are the properties last written to the member's status (valid
	// when haveWritten).
	written     tunnel.ClusterProperties
	haveWritten bool
	endReason   string // why the session ended (set by whoever ends it)
	// pending are the Work changed since the sender last looked. The sender
	// (sendChanged) runs only while there is something to send, never
	// waiting in a goroutine of its own: synced is set once the connect's
	// sync is done, sending while a sender runs.
	pending map[string]struct{}
	synced  bool
	sending bool
	// send carries pending Work to the agent (set before synced).
	send func(names []string) error
	// workErr is why sending Work ended the session, if it did.
	workErr error
}

// markChanged records that a Work of the member changed, and starts a
// sender unless one runs or the connect's sync has yet to finish (which
// takes what is pending when it does).
func (ms *memberSession) markChanged(work string) {
	ms.mu.Lock()
	ms.pending[work] = struct{}{}
	start := ms.synced && !ms.sending
	if start {
		ms.sending = true
	}
	ms.mu.Unlock()
	if start {
		go ms.sendChanged()
	}
}

// takeChanged returns the pending Work and clears it; with none pending it
// ends the turn of the sender (sending false) under the same lock, so that
// markChanged starts the next one.
func (ms *memberSession) takeChanged() []string {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if len(ms.pending) == 0 {
		ms.sending = false
		return nil
	}
	out := make([]string, 0, len(ms.pending))
	for n := range ms.pending {
		out = append(out, n)
	}
	ms.pending = map[string]struct{}{}
	return out
}

// syncDone ends the connect's sync: from now on changes are sent as they come,
// starting with those that came during the sync.
func (ms *memberSession) syncDone(send func(names []string) error) {
	ms.mu.Lock()
	ms.send, ms.synced = send, true
	start := len(ms.pending) > 0 && !ms.sending
	if start {
		ms.sending = true
	}
	ms.mu.Unlock()
	if start {
		go ms.sendChanged()
	}
}

// sendChanged sends the pending Work until none is left. A failure ends the
// session, recording why (a failed write has closed it already; one that is
// still open could not read the Work).
func (ms *memberSession) sendChanged() {
	for {
		names := ms.takeChanged()
		if names == nil {
			return
		}
		if err := ms.send(names); err != nil {
			ms.mu.Lock()
			ms.workErr = err
			ms.sending = false
			ms.mu.Unlock()
			if ms.sess.Err() == nil {
				ms.end("failed to send Work: " + err.Error())
			}
			return
		}
	}
}

func (ms *memberSession) end(reason string) {
	ms.mu.Lock()
	if ms.endReason == "" {
		ms.endReason = reason
	}
	ms.mu.Unlock()
	_ = ms.sess.CloseWithReason(reason)
}

// serveSession runs one member's session until it closes.
func (s *Server) serveSession(ctx context.Context, ss *tunnel.ServerSession) {
	name := ss.PeerName()
	period := tunnel.DefaultHeartbeatPeriod
	since := s.now()
	ms := &memberSession{
		name: name, sess: ss, since: since, log: s.log.WithValues("member", name),
		generation: since.UnixNano(),
		pending:    map[string]struct{}{},
	}
	if peer := ss.PeerCertificate(); peer != nil {
		ms.serial, ms.notAfter = pki.Serial(peer), peer.NotAfter
	}
	mc := &clusterv1beta1.MemberCluster{}
	if err := s.reader.Get(ctx, types.NamespacedName{Name: name}, mc); err == nil && mc.Spec.HeartbeatPeriodSeconds > 0 {
		period = time.Duration(mc.Spec.HeartbeatPeriodSeconds) * time.Second
	}
	ms.period = period
	ms.lastHeartbeat = s.now()
	s.register(ms)
	ms.log.Info("agent connected", "remote", ss.RemoteAddr().String(), "agentVersion", ss.Hello().AgentVersion, "capabilities", ss.Capabilities(), "generation", ms.generation)
	first, hb := s.firstHeartbeat(ms)
	s.writeConnected(ctx, ms, hb)

	// The status loop runs in this goroutine (one goroutine a member fewer);
	// an error of its own ends the others as the group's would.
	lctx, cancel := context.WithCancel(ctx)
	g, gctx := errgroup.WithContext(lctx)
	g.Go(func() error { return s.controlLoop(gctx, ms, first) })
	g.Go(func() error { return s.workLoop(gctx, ms) })
	stopWatchdog := s.watchdog(ms)
	statusErr := s.statusLoop(gctx, ms)
	if statusErr != nil {
		cancel()
	}
	err := g.Wait()
	cancel()
	if err == nil {
		err = statusErr
	}
	ms.mu.Lock()
	if err == nil {
		err = ms.workErr
	}
	ms.mu.Unlock()
	stopWatchdog()
	ms.end("session ended")
	if !s.unregister(ms) {
		return
	}
	ms.mu.Lock()
	reason := ms.endReason
	ms.mu.Unlock()
	s.sessionEnded(ctx, ms, reason, err)
}

// sessionEnded records the end of a member's session when disconnectAfter
// says so, waiting out the grace, or the replica's lost standing, first.
func (s *Server) sessionEnded(ctx context.Context, ms *memberSession, reason string, err error) {
	stopping := func() bool { return s.life != nil && s.life.Err() != nil }
	var done <-chan struct{}
	if s.life != nil {
		done = s.life.Done()
	}
	ended := time.Now()
	end := SessionEnd{Reason: reason}
	var v EndVerdict
	for {
		end.Stopping = stopping()
		end.StandingLost = s.standing.regained() != nil
		end.Reconnected = end.Waited > 0 && s.Connected(ms.name)
		v = disconnectAfter(end, s.opts.DisconnectGrace)
		if v.Wait == 0 && !v.WaitForStanding {
			break
		}
		var wake <-chan time.Time
		var t *time.Timer
		if v.Wait > 0 {
			ms.log.V(1).Info("agent session ended; waiting for the agent to reconnect", "reason", reason, "error", errString(err), "grace", v.Wait)
			t = time.NewTimer(v.Wait)
			wake = t.C
		} else {
			ms.log.V(1).Info("agent session ended while this replica cannot renew its Lease; deciding once it can", "reason", reason)
		}
		select {
		case <-wake:
		case <-s.standing.regained(): // nil (blocks) while the replica stands
		case <-done:
		}
		if t != nil {
			t.Stop()
		}
		end.Waited = max(time.Since(ended), time.Nanosecond)
	}
	switch {
	case v.Write:
		ms.log.Info("agent disconnected", "reason", reason, "error", errString(err))
		s.writeDisconnected(context.WithoutCancel(ctx), ms, reason)
	case end.Stopping:
		// This replica is stopping: its agents redial at once (to it,
		// restarted, or to another replica, whose session write takes
		// over). Writing every member disconnected here would flap the
		// whole fleet on each hub restart; a member that does not come
		// back is recorded by the leader's sweep when this replica's
		// Lease is gone (released when Start returns, or expired).
		ms.log.V(1).Info("agent session ended by the hub's shutdown", "reason", reason)
	default:
		ms.log.Info("agent reconnected within the grace; nothing recorded", "reason", reason, "grace", s.opts.DisconnectGrace)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// register makes ms the member's session, closing an older one.
func (s *Server) register(ms *memberSession) {
	s.mu.Lock()
	old := s.sessions[ms.name]
	s.sessions[ms.name] = ms
	n := len(s.sessions)
	s.mu.Unlock()
	s.metrics.sessions.Set(float64(n))
	s.updateMemberExpiry()
	if old != nil {
		old.end("replaced by a newer session of the same member")
	}
}

// unregister removes ms if it is still the member's session; false means a newer
// session took over (and no disconnect must be recorded).
func (s *Server) unregister(ms *memberSession) bool {
	s.observeSessionEnd(ms)
	defer s.updateMemberExpiry()
	s.mu.Lock()
	defer func() { s.metrics.sessions.Set(float64(len(s.sessions))); s.mu.Unlock() }()
	if s.sessions[ms.name] != ms {
		return false
	}
	delete(s.sessions, ms.name)
	return true
}

// updateMemberExpiry sets the earliest expiry among the member certificates
// of the sessions this replica holds (0 without sessions).
func (s *Server) updateMemberExpiry() {
	s.mu.Lock()
	var earliest time.Time
	for _, ms := range s.sessions {
		if !ms.notAfter.IsZero() && (earliest.IsZero() || ms.notAfter.Before(earliest)) {
			earliest = ms.notAfter
		}
	}
	s.mu.Unlock()
	v := 0.0
	if !earliest.IsZero() {
		v = float64(earliest.Unix())
	}
	s.metrics.certificateExpiry.WithLabelValues(certificateMembersEarliest).Set(v)
}

// propertiesKnown reports whether a heartbeat carries properties the agent
// has collected: an agent's first heartbeat may come before its collector ran
// once, with every property at its zero value, which says nothing about the
// member's health.
func propertiesKnown(p tunnel.ClusterProperties) bool {
	return p.APIServerHealthy || p.APIServerMessage != "" || p.KubernetesVersion != "" || p.NodeCount > 0
}

// firstHeartbeatWait is how long a new session waits for the agent's first
// heartbeat (an agent sends one as soon as its session is accepted) before it
// records the connection without it.
const firstHeartbeatWait = time.Second

// controlRecv is one read of the control stream.
type controlRecv struct {
	m   tunnel.Message
	err error
}

// firstHeartbeat reads the session's first control message, waiting up to
// firstHeartbeatWait. It returns a channel that yields that message (or the
// read's error) to controlLoop, and the message if it is a heartbeat with
// properties the agent has collected: writeConnected then records the
// connection and the member's health in one status write, not two.
func (s *Server) firstHeartbeat(ms *memberSession) (<-chan controlRecv, *tunnel.Heartbeat) {
	first := make(chan controlRecv, 1)
	go func() {
		m, err := ms.sess.Control().Recv()
		first <- controlRecv{m: m, err: err}
	}()
	t := time.NewTimer(firstHeartbeatWait)
	defer t.Stop()
	select {
	case r := <-first:
		first <- r // for controlLoop, which answers it
		if hb, ok := r.m.(tunnel.Heartbeat); ok && r.err == nil && propertiesKnown(hb.Properties) {
			return first, &hb
		}
	case <-t.C:
	}
	return first, nil
}

// controlLoop answers heartbeats and records health transitions, beginning
// with the message first yields. Heartbeats are read no faster than
// Options.HeartbeatRate.
func (s *Server) controlLoop(ctx context.Context, ms *memberSession, first <-chan controlRecv) error {
	limit := rate.NewLimiter(rate.Limit(s.opts.HeartbeatRate), 10)
	for {
		var m tunnel.Message
		var err error
		if first != nil {
			select {
			case r := <-first:
				m, err = r.m, r.err
			case <-ctx.Done():
				return nil
			}
			first = nil
		} else {
			if err := limit.Wait(ctx); err != nil {
				return nil
			}
			m, err = ms.sess.Control().Recv()
		}
		if err != nil {
			ms.end("agent closed the tunnel")
			return err
		}
		switch msg := m.(type) {
		case tunnel.Heartbeat:
			s.metrics.heartbeats.Inc()
			known := propertiesKnown(msg.Properties)
			ms.mu.Lock()
			ms.lastHeartbeat = s.now()
			if known {
				// Until the agent has collected its properties, health
				// stays Unknown.
				// Equal properties (nearly every heartbeat) keep the maps
				// held already, often those written last: a member holds
				// one copy, not two.
				if !ms.haveProps || !sameProperties(ms.props, msg.Properties) {
					ms.props = msg.Properties
				}
				ms.haveProps = true
			}
			cause := ""
			switch {
			case !known:
			case !ms.haveWritten:
				cause = "first-heartbeat"
			default:
				if changed, what := propertiesChanged(ms.written, msg.Properties); changed {
					cause = "property-change"
					if what == "health" {
						cause = "health"
					}
				}
			}
			ms.mu.Unlock()
			if err := ms.sess.Control().Send(tunnel.HeartbeatAck{Sequence: msg.Sequence}); err != nil {
				return err
			}
			if cause != "" {
				s.writeProperties(ctx, ms, cause)
			}
		case tunnel.Goodbye:
			ms.end("agent said goodbye: " + msg.Reason)
			return nil
		default:
			ms.log.V(1).Info("ignoring control message", "type", m.FrameType().String())
		}
	}
}

// sameProperties reports whether a and b say the same.
func sameProperties(a, b tunnel.ClusterProperties) bool {
	return a.NodeCount == b.NodeCount && a.KubernetesVersion == b.KubernetesVersion && a.Provider == b.Provider &&
		a.APIServerHealthy == b.APIServerHealthy && a.APIServerMessage == b.APIServerMessage &&
		maps.Equal(a.Capacity, b.Capacity) && maps.Equal(a.Allocatable, b.Allocatable) && maps.Equal(a.Available, b.Available)
}

// watchdog ends a session whose heartbeats stopped. It writes nothing while
// heartbeats come: liveness is kept in memory. It runs on a timer, not in a
// goroutine of its own (at thousands of members every goroutine a session is
// megabytes of stacks); the function it returns stops it.
func (s *Server) watchdog(ms *memberSession) (stop func()) {
	var mu sync.Mutex
	stopped := false
	var t *time.Timer
	check := func() {
		ms.mu.Lock()
		last := ms.lastHeartbeat
		ms.mu.Unlock()
		if overdue, why := heartbeatOverdue(last, s.now(), ms.period, s.opts.HeartbeatMisses); overdue {
			ms.end(why)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			t.Reset(ms.period / 2)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	t = time.AfterFunc(ms.period/2, check)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		t.Stop()
	}
}

// workLoop sends the member what it lacks on connect and returns; every later
// change is sent by sendChanged.
func (s *Server) workLoop(ctx context.Context, ms *memberSession) error {
	m, err := ms.sess.Work().Recv()
	if err != nil {
		return err
	}
	inv, ok := m.(tunnel.WorkInventory)
	if !ok {
		ms.end("the first work message was not an inventory")
		return fmt.Errorf("unexpected %s on the work stream", m.FrameType())
	}
	held := map[string]string{}
	for _, item := range inv.Items {
		held[item.Name] = item.Hash
	}
	ns := clusterv1beta1.MemberNamespace(ms.name)
	works := &placementv1beta1.WorkList{}
	if err := s.reader.List(ctx, works, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("failed to list Work for %s: %w", ms.name, err)
	}
	// sent is what the agent holds as far as this session knows.
	sent := map[string]string{}
	for i := range works.Items {
		w := &works.Items[i]
		if !w.DeletionTimestamp.IsZero() {
			// Being deleted: the agent removes what it holds of it (if anything)
			// and confirms, which lets the Work go.
			if err := s.sendDelete(ms, w.Name); err != nil {
				return err
			}
			delete(held, w.Name)
			continue
		}
		h := workhash.Of(&w.Spec)
		sent[w.Name] = h
		if held[w.Name] == h {
			continue
		}
		if err := s.sendUpsert(ctx, ms, w, h); err != nil {
			return err
		}
	}
	for name := range held {
		if _, ok := sent[name]; !ok {
			if err := s.sendDelete(ms, name); err != nil {
				return err
			}
		}
	}
	if err := ms.sess.Work().Send(tunnel.WorkSyncDone{}); err != nil {
		return err
	}
	// From here on changes are sent as they come (sendChanged), by a
	// goroutine that runs only while there is something to send: waiting
	// for them in this one would cost every member its stack.
	ms.syncDone(func(names []string) error { return s.sendWork(ctx, ms, ns, sent, names) })
	return nil
}

// sendWork sends the agent the named Work of its namespace as they are now:
// an upsert for those it lacks or holds at another hash, a delete for those
// gone or being deleted. sent is what the agent holds as far as the session
// knows; only one sender uses it at a time.
func (s *Server) sendWork(ctx context.Context, ms *memberSession, ns string, sent map[string]string, names []string) error {
	for _, name := range names {
		if ctx.Err() != nil || ms.sess.Err() != nil {
			return nil
		}
		w := &placementv1beta1.Work{}
		err := s.reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, w)
		switch {
		case err == nil && w.DeletionTimestamp.IsZero():
			h := workhash.Of(&w.Spec)
			if sent[name] == h {
				continue
			}
			if err := s.sendUpsert(ctx, ms, w, h); err != nil {
				return err
			}
			sent[name] = h
		case err == nil || apierrors.IsNotFound(err):
			if _, ok := sent[name]; !ok && (err != nil || !controllerutil.ContainsFinalizer(w, placementv1beta1.AppliedResourcesCleanupFinalizer)) {
				continue
			}
			if err := s.sendDelete(ms, name); err != nil {
				return err
			}
			delete(sent, name)
		default:
			return fmt.Errorf("failed to read Work %s/%s: %w", ns, name, err)
		}
	}
	return nil
}

func (s *Server) sendUpsert(ctx context.Context, ms *memberSession, w *placementv1beta1.Work, hash string) error {
	out := w.DeepCopy()
	out.ManagedFields = nil
	out.Status = placementv1beta1.WorkStatus{}
	data, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("failed to encode Work %s: %w", w.Name, err)
	}
	if err := ms.sess.Work().Send(tunnel.WorkUpsert{Name: w.Name, Hash: hash, Work: data}); err != nil {
		if errors.Is(err, tunnel.ErrFrameTooLarge) {
			// Too big for the agent: say so on the Work instead of dropping the
			// session. It is sent again when its spec changes.
			ms.log.Error(err, "work too large for the agent", "work", w.Name, "bytes", len(data))
			if err := s.markTooLarge(ctx, w, hash, len(data), err); err != nil {
				return err
			}
			return nil
		}
		return err
	}
	s.metrics.workSent.WithLabelValues("upsert").Inc()
	ms.log.V(1).Info("sent work", "work", w.Name, "hash", hash)
	return nil
}

func (s *Server) sendDelete(ms *memberSession, name string) error {
	if err := ms.sess.Work().Send(tunnel.WorkDelete{Name: name}); err != nil {
		return err
	}
	s.metrics.workSent.WithLabelValues("delete").Inc()
	ms.log.V(1).Info("sent work deletion", "work", name)
	return nil
}

// statusLoop writes the Work status the agent reports, for the current spec
// only. Reports are read no faster than Options.StatusRate.
func (s *Server) statusLoop(ctx context.Context, ms *memberSession) error {
	ns := clusterv1beta1.MemberNamespace(ms.name)
	limit := rate.NewLimiter(rate.Limit(s.opts.StatusRate), max(int(s.opts.StatusRate*10), 1))
	for {
		if err := limit.Wait(ctx); err != nil {
			return nil
		}
		m, err := ms.sess.Status().Recv()
		if err != nil {
			return err
		}
		if u, ok := m.(tunnel.Upsync); ok {
			s.handleUpsync(ctx, ms, u)
			continue
		}
		rep, ok := m.(tunnel.StatusReport)
		if !ok {
			continue
		}
		if rep.Removed {
			s.reportReleased(ctx, ms.name, ns, rep.WorkName, rep.Released)
			if err := s.releaseWork(ctx, ns, rep.WorkName); err != nil {
				ms.log.Error(err, "failed to let a removed Work go", "work", rep.WorkName)
			}
			s.metrics.statusReports.WithLabelValues("removed").Inc()
			continue
		}
		outcome, err := s.writeWorkStatus(ctx, ns, rep)
		if err != nil {
			ms.log.Error(err, "failed to record work status", "work", rep.WorkName)
			outcome = "error"
		}
		s.metrics.statusReports.WithLabelValues(outcome).Inc()
	}
}

// releaseWork drops the cleanup finalizer of a deleted Work whose objects the
// member confirmed removed.
func (s *Server) releaseWork(ctx context.Context, ns, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		w := &placementv1beta1.Work{}
		if err := s.direct.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, w); err != nil {
			return client.IgnoreNotFound(err)
		}
		if w.DeletionTimestamp.IsZero() {
			return nil
		}
		return pipeline.RemoveFinalizer(ctx, s.direct, w, placementv1beta1.AppliedResourcesCleanupFinalizer, pipeline.ManagerTunnelServer)
	})
}

func (s *Server) writeWorkStatus(ctx context.Context, ns string, rep tunnel.StatusReport) (string, error) {
	status := placementv1beta1.WorkStatus{}
	if err := json.Unmarshal(rep.Status, &status); err != nil {
		return "malformed", nil
	}
	outcome := "written"
	// The first attempt reads the manager's cache (an unchanged or stale
	// report then costs no request); a conflict reads the API server.
	reader := s.reader
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		defer func() { reader = s.direct }()
		w := &placementv1beta1.Work{}
		if err := reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: rep.WorkName}, w); err != nil {
			if apierrors.IsNotFound(err) {
				outcome = "unknown-work"
				return nil
			}
			return err
		}
		if workhash.Of(&w.Spec) != rep.Hash {
			// A report about an older spec: the agent will report the new one.
			outcome = "stale"
			return nil
		}
		if equality.Semantic.DeepEqual(w.Status, status) {
			outcome = "unchanged"
			return nil
		}
		w = w.DeepCopy() // the cache's object is shared
		w.Status = status
		return s.direct.Status().Update(ctx, w)
	})
	return outcome, err
}

// markTooLarge records on a Work that it was not sent to the agent because it
// is larger than a tunnel frame may be: Applied=False, reason WorkTooLarge,
// with the size and the limit, and Available=Unknown. The agent never saw this
// spec, so no report of it replaces the condition; the next spec is sent anew.
func (s *Server) markTooLarge(ctx context.Context, w *placementv1beta1.Work, hash string, size int, sendErr error) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &placementv1beta1.Work{}
		if err := s.direct.Get(ctx, types.NamespacedName{Namespace: w.Namespace, Name: w.Name}, cur); err != nil {
			return client.IgnoreNotFound(err)
		}
		if workhash.Of(&cur.Spec) != hash {
			return nil // changed meanwhile: the new spec is sent next
		}
		before := cur.Status.DeepCopy()
		tooLargeStatus(&cur.Status, cur.Generation, size, sendErr)
		if equality.Semantic.DeepEqual(before, &cur.Status) {
			return nil
		}
		return s.direct.Status().Update(ctx, cur)
	})
}

// tooLargeStatus is the status of a Work of size bytes that the tunnel could not
// carry (sendErr names the limit).
func tooLargeStatus(st *placementv1beta1.WorkStatus, gen int64, size int, sendErr error) {
	conditions.Set(&st.Conditions, placementv1beta1.ConditionApplied, metav1.ConditionFalse, placementv1beta1.ReasonWorkTooLarge,
		fmt.Sprintf("the Work is %d bytes, too large to send to the agent (%v): select fewer or smaller resources, or split them over several placements", size, sendErr), gen)
	conditions.Set(&st.Conditions, placementv1beta1.ConditionAvailable, metav1.ConditionUnknown, placementv1beta1.ReasonNotApplied,
		"the Work was not sent to the agent", gen)
	st.ManifestConditions = nil
}

// heartbeatOverdue reports whether a member whose last heartbeat came at last is
// to be taken as disconnected at now: more than misses periods have passed.
func heartbeatOverdue(last, now time.Time, period time.Duration, misses int) (bool, string) {
	silent := now.Sub(last)
	if silent <= time.Duration(misses)*period {
		return false, ""
	}
	return true, fmt.Sprintf("%s for %s (%d periods of %s)", heartbeatOverduePrefix, silent.Round(time.Second), misses, period)
}

// heartbeatOverduePrefix begins the reason of a session ended by
// heartbeatOverdue.
const heartbeatOverduePrefix = "no heartbeat"
