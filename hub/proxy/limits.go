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

package proxy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// What one hub user, and one proxied request, may take. Each limit is
// refused or cut with a message naming the hub flag that sets it:
//
//   - a user has at most MaxInflightPerUser requests in flight (429), and
//     sends at most UserQPS requests a second with bursts of UserBurst
//     (429 with Retry-After), over all members;
//   - a request body holds at most MaxRequestBytes (413);
//   - a response to a request that is not long-running holds at most
//     MaxResponseBytes; one that grows past it is cut (the status line
//     went out already) and counted in flotilla_proxy_cut_total;
//   - a long-running request (watch, logs -f, exec, attach, port-forward)
//     ends after MaxStreamDuration, and an upgraded one (exec, attach,
//     port-forward) also after StreamIdleTimeout without a byte either way.
const (
	// DefaultMaxInflightPerUser bounds one user's requests in flight, over
	// every member.
	DefaultMaxInflightPerUser = 50
	// DefaultUserQPS and DefaultUserBurst bound how fast one user sends.
	// A fleet-wide `kubectl flotilla get` asks 10 members at once and
	// client-go waits out a 429's Retry-After, so a large fleet is slowed,
	// not refused.
	DefaultUserQPS   = 50
	DefaultUserBurst = 100
	// DefaultMaxRequestBytes bounds a request body, as kube-apiserver's
	// default --max-request-bytes (3 MiB) does for its own.
	DefaultMaxRequestBytes = 3 << 20
	// DefaultMaxResponseBytes bounds the response to a request that is not
	// long-running (a very large list).
	DefaultMaxResponseBytes = 256 << 20
	// DefaultStreamIdleTimeout ends an exec, attach or port-forward that
	// carried nothing for this long, as the kubelet's default
	// --streaming-connection-idle-timeout does.
	DefaultStreamIdleTimeout = 4 * time.Hour
	// DefaultMaxStreamDuration ends any long-running request after this long.
	DefaultMaxStreamDuration = 24 * time.Hour
)

// Why a proxied stream or response was cut: the reason label of
// flotilla_proxy_cut_total.
const (
	cutIdle          = "idle"
	cutDuration      = "duration"
	cutResponseBytes = "response-bytes"
)

// userSweepInterval is how often users with nothing in flight and a full
// token bucket are forgotten, which bounds the users tracked to those active
// lately.
const userSweepInterval = time.Minute

// userState is what the hub tracks of one user.
type userState struct {
	inflight int
	limiter  *rate.Limiter
	lastSeen time.Time
}

// userLimits holds every user's in-flight count and token bucket.
type userLimits struct {
	maxInflight int
	qps         rate.Limit
	burst       int

	mu        sync.Mutex
	users     map[string]*userState
	lastSweep time.Time
}

func newUserLimits(maxInflight int, qps float64, burst int) *userLimits {
	return &userLimits{maxInflight: maxInflight, qps: rate.Limit(qps), burst: burst, users: map[string]*userState{}}
}

// admit takes one of user's in-flight slots and one token. It returns the
// refusal when it cannot.
func (l *userLimits) admit(user string, now time.Time) (release func(), refusal *apierrors.StatusError) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	u := l.users[user]
	if u == nil {
		u = &userState{limiter: rate.NewLimiter(l.qps, l.burst)}
		l.users[user] = u
	}
	u.lastSeen = now
	if u.inflight >= l.maxInflight {
		return nil, apierrors.NewTooManyRequests(fmt.Sprintf("user %q has %d proxied requests in flight, the most the hub allows one user (--proxy-max-inflight-per-user)", user, l.maxInflight), 1)
	}
	if !u.limiter.AllowN(now, 1) {
		retry := max(int(math.Ceil(1/float64(l.qps))), 1)
		return nil, apierrors.NewTooManyRequests(fmt.Sprintf("user %q sends proxied requests faster than the hub allows one user (--proxy-user-qps %g, --proxy-user-burst %d)", user, float64(l.qps), l.burst), retry)
	}
	u.inflight++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		u.inflight--
	}, nil
}

// sweep forgets the users that are idle: nothing in flight and seen last
// long enough ago that their bucket is full again, so nothing is lost.
func (l *userLimits) sweep(now time.Time) {
	if now.Sub(l.lastSweep) < userSweepInterval {
		return
	}
	l.lastSweep = now
	refill := time.Duration(float64(l.burst) / float64(l.qps) * float64(time.Second))
	for name, u := range l.users {
		if u.inflight == 0 && now.Sub(u.lastSeen) > refill {
			delete(l.users, name)
		}
	}
}

// inflightOf is how many requests user has in flight (for tests).
func (l *userLimits) inflightOf(user string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if u := l.users[user]; u != nil {
		return u.inflight
	}
	return 0
}

// tracked is how many users are tracked now (for tests).
func (l *userLimits) tracked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.users)
}

// errResponseTooLarge is what a capped writer returns once a response grew
// past its cap; the reverse proxy then aborts the response.
var errResponseTooLarge = errors.New("the response is larger than --proxy-max-response-bytes")

// streamLimits marks, in a request's context, the connection the dialer
// opens for it as an upgraded stream to guard.
type streamLimits struct {
	idle, lifetime time.Duration
	// cut is called once, with the reason, when the guard closes the stream.
	cut func(reason string)
}

type streamLimitsKey struct{}

func withStreamLimits(ctx context.Context, s *streamLimits) context.Context {
	return context.WithValue(ctx, streamLimitsKey{}, s)
}

func streamLimitsFrom(ctx context.Context) *streamLimits {
	s, _ := ctx.Value(streamLimitsKey{}).(*streamLimits)
	return s
}

// guardedConn closes its connection when nothing was read or written for
// idle, or when it has been open for lifetime, whichever comes first.
type guardedConn struct {
	net.Conn
	limits   *streamLimits
	last     atomic.Int64 // unix nanoseconds of the last byte either way
	idle     *time.Timer
	lifetime *time.Timer
	once     sync.Once
}

func guard(c net.Conn, s *streamLimits) *guardedConn {
	g := &guardedConn{Conn: c, limits: s}
	g.last.Store(time.Now().UnixNano())
	g.idle = time.AfterFunc(s.idle, g.checkIdle)
	g.lifetime = time.AfterFunc(s.lifetime, func() { g.cut(cutDuration) })
	return g
}

func (g *guardedConn) checkIdle() {
	quiet := time.Since(time.Unix(0, g.last.Load()))
	if quiet >= g.limits.idle {
		g.cut(cutIdle)
		return
	}
	g.idle.Reset(g.limits.idle - quiet)
}

func (g *guardedConn) cut(reason string) {
	g.once.Do(func() {
		g.idle.Stop()
		g.lifetime.Stop()
		_ = g.Conn.Close()
		if g.limits.cut != nil {
			g.limits.cut(reason)
		}
	})
}

func (g *guardedConn) Read(b []byte) (int, error) {
	n, err := g.Conn.Read(b)
	if n > 0 {
		g.last.Store(time.Now().UnixNano())
	}
	return n, err
}

func (g *guardedConn) Write(b []byte) (int, error) {
	n, err := g.Conn.Write(b)
	if n > 0 {
		g.last.Store(time.Now().UnixNano())
	}
	return n, err
}

func (g *guardedConn) Close() error {
	var err error
	g.once.Do(func() {
		g.idle.Stop()
		g.lifetime.Stop()
		err = g.Conn.Close()
	})
	return err
}
