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

package balancer

import (
	"context"
	"io"
	"net"
	"net/http/httptest"
	"testing"
	"time"
)

// echoBackend accepts connections and answers each byte with its name.
func echoBackend(t *testing.T, name byte) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				buf := make([]byte, 1)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
					if _, err := c.Write([]byte{name}); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

func ask(t *testing.T, c net.Conn) byte {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte{'?'}); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatal(err)
	}
	return buf[0]
}

// Connections spread over the backends, skip a dead one, and a cut resets
// them all.
func TestBalancerSpreadsSkipsDeadBackendsAndCuts(t *testing.T) {
	a, bAddr := echoBackend(t, 'a'), echoBackend(t, 'b')
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()

	b := New([]string{a, bAddr})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = b.Serve(ctx, l) }()
	ctl := httptest.NewServer(b.Handler())
	defer ctl.Close()
	client := Client{Address: ctl.Listener.Addr().String()}

	seen := map[byte]int{}
	var conns []net.Conn
	for range 4 {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		seen[ask(t, c)]++
	}
	if seen['a'] != 2 || seen['b'] != 2 {
		t.Errorf("4 connections went to %v, want 2 per backend", seen)
	}
	if err := client.SetBackends(ctx, []string{deadAddr, a}); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	conns = append(conns, c)
	if got := ask(t, c); got != 'a' {
		t.Errorf("with a dead backend first, the connection reached %q, want a", got)
	}
	n, err := client.Cut(ctx)
	if err != nil || n != len(conns) {
		t.Fatalf("Cut = %d, %v; want %d connections cut", n, err, len(conns))
	}
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Error("a cut connection still reads")
		}
	}
	st, err := client.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Cuts != 1 || st.Accepted != int64(len(conns)) {
		t.Errorf("status = %+v, want 1 cut of %d accepted connections", st, len(conns))
	}
}
