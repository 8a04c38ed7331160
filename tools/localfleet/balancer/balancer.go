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

// Package balancer is the small TCP balancer localfleet puts in front of the
// hub's tunnel port when the hub runs as several replicas (or when e2e asks
// for it): agents dial one address and land on any live replica, as behind a
// Kubernetes Service. It doubles as the fault injector of the e2e suite: an
// HTTP control endpoint cuts (resets) every connection, delays traffic,
// changes the backends, and partitions one member from the hub.
//
// Agents speak TLS to the hub, so the balancer cannot tell whose connection it
// forwards from its bytes. Instead it serves one more listener per member
// (MemberAddress): localfleet points each agent at its own. Block(member) then
// resets that member's connections and black-holes its new ones — accepted
// and held without a byte forwarded, as a partition that drops packets looks
// to both ends: the agent's dial hangs until its own handshake timeout, and
// the hub hears nothing at all. Unblock forwards the held connections (a
// healed network delivers what was queued) and lets new ones through.
package balancer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Balancer forwards each accepted connection to the backend with the fewest
// open connections that answers (round robin among equals), so that
// long-lived tunnels spread over the replicas.
type Balancer struct {
	mu       sync.Mutex
	backends []string
	next     int
	conns    map[*pair]struct{}
	open     map[string]int // open connections by backend
	delay    time.Duration
	// members are the per-member listeners, by member name.
	members map[string]*member
	// closed is closed when Serve's context ends: member listeners close
	// and held connections are dropped.
	closed    chan struct{}
	closeOnce sync.Once

	accepted, cuts atomic.Int64
}

// member is one member's listener and partition.
type member struct {
	listener net.Listener
	// healed is non-nil while the member is blocked, and closed by Unblock.
	healed chan struct{}
	// held counts the connections accepted while blocked and not forwarded.
	held int
}

// pair is one forwarded connection.
type pair struct {
	client, backend net.Conn
	addr            string
	member          string // "" on the shared listener
}

// New returns a balancer over backends (host:port).
func New(backends []string) *Balancer {
	return &Balancer{backends: backends, conns: map[*pair]struct{}{}, open: map[string]int{},
		members: map[string]*member{}, closed: make(chan struct{})}
}

// Serve forwards the connections l accepts until ctx ends; then it closes
// the member listeners too.
func (b *Balancer) Serve(ctx context.Context, l net.Listener) error {
	context.AfterFunc(ctx, func() {
		_ = l.Close()
		b.shutdown()
	})
	err := b.accept(l, "")
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func (b *Balancer) accept(l net.Listener, member string) error {
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		b.accepted.Add(1)
		go b.forward(c, member)
	}
}

func (b *Balancer) shutdown() {
	b.closeOnce.Do(func() {
		close(b.closed)
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, m := range b.members {
			_ = m.listener.Close()
		}
	})
}

// MemberAddress returns the address of name's own listener, opening it on a
// free port of host the first time. Connections to it are forwarded as those
// to the shared listener are, and Block(name) partitions them.
func (b *Balancer) MemberAddress(name, host string) (string, error) {
	if name == "" {
		return "", errors.New("a member name is required")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-b.closed:
		return "", errors.New("the balancer is shutting down")
	default:
	}
	if m, ok := b.members[name]; ok {
		return m.listener.Addr().String(), nil
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", fmt.Errorf("failed to listen for member %s: %w", name, err)
	}
	b.members[name] = &member{listener: l}
	go func() { _ = b.accept(l, name) }()
	return l.Addr().String(), nil
}

// Block partitions member name from the hub: its forwarded connections are
// reset and new ones are held, unforwarded, until Unblock. It returns how many
// connections it reset.
func (b *Balancer) Block(name string) (int, error) {
	b.mu.Lock()
	m, ok := b.members[name]
	if !ok {
		b.mu.Unlock()
		return 0, fmt.Errorf("no listener for member %q: its agent dials the shared address", name)
	}
	if m.healed == nil {
		m.healed = make(chan struct{})
	}
	var pairs []*pair
	for p := range b.conns {
		if p.member == name {
			pairs = append(pairs, p)
		}
	}
	b.mu.Unlock()
	for _, p := range pairs {
		p.reset()
	}
	return len(pairs), nil
}

// Unblock ends member name's partition: the connections held meanwhile are
// forwarded, and so are new ones.
func (b *Balancer) Unblock(name string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	m, ok := b.members[name]
	if !ok {
		return fmt.Errorf("no listener for member %q", name)
	}
	if m.healed != nil {
		close(m.healed)
		m.healed = nil
	}
	return nil
}

// hold waits while member name is blocked; false means the balancer shut
// down meanwhile.
func (b *Balancer) hold(name string) bool {
	for {
		b.mu.Lock()
		m := b.members[name]
		if m == nil || m.healed == nil {
			b.mu.Unlock()
			return true
		}
		healed := m.healed
		m.held++
		b.mu.Unlock()
		var open bool
		select {
		case <-healed:
			open = true
		case <-b.closed:
		}
		b.mu.Lock()
		m.held--
		b.mu.Unlock()
		if !open {
			return false
		}
	}
}

func (b *Balancer) forward(client net.Conn, member string) {
	if member != "" && !b.hold(member) {
		_ = client.Close()
		return
	}
	b.mu.Lock()
	candidates := make([]string, 0, len(b.backends))
	for i := range b.backends {
		candidates = append(candidates, b.backends[(b.next+i)%len(b.backends)])
	}
	if len(b.backends) > 0 {
		b.next = (b.next + 1) % len(b.backends)
	}
	sort.SliceStable(candidates, func(i, j int) bool { return b.open[candidates[i]] < b.open[candidates[j]] })
	delay := b.delay
	b.mu.Unlock()
	var backend net.Conn
	var addr string
	for _, a := range candidates {
		c, err := net.DialTimeout("tcp", a, 2*time.Second)
		if err == nil {
			backend, addr = c, a
			break
		}
	}
	if backend == nil {
		_ = client.Close()
		return
	}
	p := &pair{client: client, backend: backend, addr: addr, member: member}
	b.mu.Lock()
	if m := b.members[member]; m != nil && m.healed != nil {
		// Blocked while the backend was dialled: Block did not see this one.
		b.mu.Unlock()
		p.reset()
		return
	}
	b.conns[p] = struct{}{}
	b.open[addr]++
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.conns, p)
		b.open[addr]--
		b.mu.Unlock()
		_ = client.Close()
		_ = backend.Close()
	}()
	done := make(chan struct{}, 2)
	go func() { copyDelayed(backend, client, delay); done <- struct{}{} }()
	go func() { copyDelayed(client, backend, delay); done <- struct{}{} }()
	<-done
}

// copyDelayed copies src to dst, holding each chunk for delay.
func copyDelayed(dst, src net.Conn, delay time.Duration) {
	if delay == 0 {
		_, _ = io.Copy(dst, src)
		return
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			time.Sleep(delay)
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Cut resets every forwarded connection (both ends see a reset, not a clean
// close) and returns how many it cut.
func (b *Balancer) Cut() int {
	b.mu.Lock()
	pairs := make([]*pair, 0, len(b.conns))
	for p := range b.conns {
		pairs = append(pairs, p)
	}
	b.mu.Unlock()
	for _, p := range pairs {
		p.reset()
	}
	b.cuts.Add(1)
	return len(pairs)
}

// reset closes both ends with a reset, not a clean close.
func (p *pair) reset() {
	for _, c := range []net.Conn{p.client, p.backend} {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // RST instead of FIN
		}
		_ = c.Close()
	}
}

// Status is what GET /status answers.
type Status struct {
	Backends    []string `json:"backends"`
	Connections int      `json:"connections"`
	Accepted    int64    `json:"accepted"`
	Cuts        int64    `json:"cuts"`
	Delay       string   `json:"delay"`
	// Members are the per-member listeners, by member name.
	Members map[string]MemberStatus `json:"members,omitempty"`
}

// MemberStatus is one member's listener in Status.
type MemberStatus struct {
	Address     string `json:"address"`
	Blocked     bool   `json:"blocked"`
	Connections int    `json:"connections"`
	// Held counts the connections accepted while blocked, not forwarded.
	Held int `json:"held"`
}

// Handler is the control endpoint:
//
//	GET  /status                      backends, open connections, counters
//	POST /cut                         reset every connection
//	POST /delay?d=200ms               hold each chunk of new connections for d (0 to stop)
//	POST /backends?addr=A&addr=B      forward new connections to these backends
//	POST /member?name=M&host=H        open (once) M's own listener on host H
//	                                  (default 127.0.0.1); answers its address
//	POST /block?member=M              reset M's connections, hold its new ones
//	POST /unblock?member=M            forward M's held and new connections
func (b *Balancer) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		b.mu.Lock()
		st := Status{Backends: append([]string(nil), b.backends...), Connections: len(b.conns),
			Accepted: b.accepted.Load(), Cuts: b.cuts.Load(), Delay: b.delay.String()}
		for name, m := range b.members {
			if st.Members == nil {
				st.Members = map[string]MemberStatus{}
			}
			ms := MemberStatus{Address: m.listener.Addr().String(), Blocked: m.healed != nil, Held: m.held}
			for p := range b.conns {
				if p.member == name {
					ms.Connections++
				}
			}
			st.Members[name] = ms
		}
		b.mu.Unlock()
		_ = json.NewEncoder(w).Encode(st)
	})
	mux.HandleFunc("POST /cut", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "%d\n", b.Cut())
	})
	mux.HandleFunc("POST /delay", func(w http.ResponseWriter, r *http.Request) {
		d, err := time.ParseDuration(r.URL.Query().Get("d"))
		if err != nil || d < 0 {
			http.Error(w, "d must be a duration such as 200ms", http.StatusBadRequest)
			return
		}
		b.mu.Lock()
		b.delay = d
		b.mu.Unlock()
	})
	mux.HandleFunc("POST /backends", func(w http.ResponseWriter, r *http.Request) {
		addrs := r.URL.Query()["addr"]
		for _, a := range addrs {
			if _, _, err := net.SplitHostPort(a); err != nil {
				http.Error(w, fmt.Sprintf("addr %q is not host:port", a), http.StatusBadRequest)
				return
			}
		}
		if len(addrs) == 0 {
			http.Error(w, "give at least one addr", http.StatusBadRequest)
			return
		}
		b.mu.Lock()
		b.backends = addrs
		b.next = 0
		b.mu.Unlock()
	})
	mux.HandleFunc("POST /member", func(w http.ResponseWriter, r *http.Request) {
		host := r.URL.Query().Get("host")
		if host == "" {
			host = "127.0.0.1"
		}
		addr, err := b.MemberAddress(r.URL.Query().Get("name"), host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintln(w, addr)
	})
	mux.HandleFunc("POST /block", func(w http.ResponseWriter, r *http.Request) {
		n, err := b.Block(r.URL.Query().Get("member"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		fmt.Fprintf(w, "%d\n", n)
	})
	mux.HandleFunc("POST /unblock", func(w http.ResponseWriter, r *http.Request) {
		if err := b.Unblock(r.URL.Query().Get("member")); err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
		}
	})
	return mux
}

// Client drives a balancer's control endpoint.
type Client struct {
	// Address is the control endpoint's host:port.
	Address string
}

func (c Client) post(ctx context.Context, path string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+c.Address+path, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("the balancer's control endpoint at %s: %w", c.Address, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("POST %s: %s: %s", path, resp.Status, strings.TrimSpace(string(body)))
	}
	return strings.TrimSpace(string(body)), nil
}

// Cut resets every connection and returns how many there were.
func (c Client) Cut(ctx context.Context) (int, error) {
	out, err := c.post(ctx, "/cut")
	if err != nil {
		return 0, err
	}
	var n int
	_, err = fmt.Sscan(out, &n)
	return n, err
}

// Delay holds each chunk of new connections for d.
func (c Client) Delay(ctx context.Context, d time.Duration) error {
	_, err := c.post(ctx, "/delay?d="+d.String())
	return err
}

// SetBackends makes new connections go to addrs.
func (c Client) SetBackends(ctx context.Context, addrs []string) error {
	if len(addrs) == 0 {
		return errors.New("no backends")
	}
	q := "addr=" + strings.Join(addrs, "&addr=")
	_, err := c.post(ctx, "/backends?"+q)
	return err
}

// MemberAddress returns the address of member's own listener on host
// (127.0.0.1 when empty), opening it the first time: point member's agent at
// it, and Block and Unblock partition that agent alone.
func (c Client) MemberAddress(ctx context.Context, member, host string) (string, error) {
	q := url.Values{"name": {member}}
	if host != "" {
		q.Set("host", host)
	}
	return c.post(ctx, "/member?"+q.Encode())
}

// Block partitions member from the hub (its connections are reset, new ones
// held unforwarded) and returns how many connections it reset.
func (c Client) Block(ctx context.Context, member string) (int, error) {
	out, err := c.post(ctx, "/block?"+url.Values{"member": {member}}.Encode())
	if err != nil {
		return 0, err
	}
	var n int
	_, err = fmt.Sscan(out, &n)
	return n, err
}

// Unblock ends member's partition.
func (c Client) Unblock(ctx context.Context, member string) error {
	_, err := c.post(ctx, "/unblock?"+url.Values{"member": {member}}.Encode())
	return err
}

// Status reads the balancer's status.
func (c Client) Status(ctx context.Context) (Status, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.Address+"/status", nil)
	if err != nil {
		return Status{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Status{}, err
	}
	defer resp.Body.Close()
	var st Status
	return st, json.NewDecoder(resp.Body).Decode(&st)
}
