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
// HTTP control endpoint cuts (resets) every connection, delays traffic, and
// changes the backends.
package balancer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
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

	accepted, cuts atomic.Int64
}

// pair is one forwarded connection.
type pair struct {
	client, backend net.Conn
	addr            string
}

// New returns a balancer over backends (host:port).
func New(backends []string) *Balancer {
	return &Balancer{backends: backends, conns: map[*pair]struct{}{}, open: map[string]int{}}
}

// Serve forwards the connections l accepts until ctx ends.
func (b *Balancer) Serve(ctx context.Context, l net.Listener) error {
	context.AfterFunc(ctx, func() { _ = l.Close() })
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		b.accepted.Add(1)
		go b.forward(c)
	}
}

func (b *Balancer) forward(client net.Conn) {
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
	p := &pair{client: client, backend: backend, addr: addr}
	b.mu.Lock()
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
		for _, c := range []net.Conn{p.client, p.backend} {
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // RST instead of FIN
			}
			_ = c.Close()
		}
	}
	b.cuts.Add(1)
	return len(pairs)
}

// Status is what GET /status answers.
type Status struct {
	Backends    []string `json:"backends"`
	Connections int      `json:"connections"`
	Accepted    int64    `json:"accepted"`
	Cuts        int64    `json:"cuts"`
	Delay       string   `json:"delay"`
}

// Handler is the control endpoint:
//
//	GET  /status                      backends, open connections, counters
//	POST /cut                         reset every connection
//	POST /delay?d=200ms               hold each chunk of new connections for d (0 to stop)
//	POST /backends?addr=A&addr=B      forward new connections to these backends
func (b *Balancer) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		b.mu.Lock()
		st := Status{Backends: append([]string(nil), b.backends...), Connections: len(b.conns),
			Accepted: b.accepted.Load(), Cuts: b.cuts.Load(), Delay: b.delay.String()}
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
