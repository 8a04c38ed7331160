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
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/pkg/poll"
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

// answers reports whether c answers a question within d.
func answers(c net.Conn, d time.Duration) bool {
	_ = c.SetDeadline(time.Now().Add(d))
	defer func() { _ = c.SetDeadline(time.Time{}) }()
	if _, err := c.Write([]byte{'?'}); err != nil {
		return false
	}
	_, err := io.ReadFull(c, make([]byte, 1))
	return err == nil
}

// A blocked member's connections are reset and its new ones held without
// reaching a backend, while another member's stay connected; once unblocked,
// the held connection is forwarded with what it sent meanwhile.
func TestBlockPartitionsOneMemberAndUnblockHealsIt(t *testing.T) {
	b := New([]string{echoBackend(t, 'a')})
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

	addrs := map[string]string{}
	for _, m := range []string{"member-1", "member-2"} {
		if addrs[m], err = client.MemberAddress(ctx, m, ""); err != nil {
			t.Fatal(err)
		}
	}
	if again, err := client.MemberAddress(ctx, "member-1", ""); err != nil || again != addrs["member-1"] {
		t.Fatalf("a second MemberAddress = %q, %v; want the same %q", again, err, addrs["member-1"])
	}
	dial := func(addr string) net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	one, two, shared := dial(addrs["member-1"]), dial(addrs["member-2"]), dial(l.Addr().String())
	for _, c := range []net.Conn{one, two, shared} {
		ask(t, c)
	}

	n, err := client.Block(ctx, "member-1")
	if err != nil || n != 1 {
		t.Fatalf("Block = %d, %v; want 1 connection reset", n, err)
	}
	_ = one.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := one.Read(make([]byte, 1)); err == nil {
		t.Error("member-1's connection still reads after Block")
	}
	if got := ask(t, two); got != 'a' {
		t.Errorf("member-2 answered %q after member-1 was blocked, want a", got)
	}
	if got := ask(t, shared); got != 'a' {
		t.Errorf("the shared listener answered %q after member-1 was blocked, want a", got)
	}
	held := dial(addrs["member-1"])
	if answers(held, 500*time.Millisecond) {
		t.Fatal("a new connection of blocked member-1 was forwarded")
	}
	var st Status
	poll.Eventually(t, 5*time.Second, 50*time.Millisecond, func() error {
		if st, err = client.Status(ctx); err != nil {
			return err
		}
		if st.Members["member-1"].Held != 1 {
			return fmt.Errorf("member-1 holds %d connections, want 1", st.Members["member-1"].Held)
		}
		return nil
	})
	want := map[string]MemberStatus{
		"member-1": {Address: addrs["member-1"], Blocked: true, Held: 1},
		"member-2": {Address: addrs["member-2"], Connections: 1},
	}
	if diff := cmp.Diff(want, st.Members); diff != "" {
		t.Errorf("members while member-1 is blocked (-want +got):\n%s", diff)
	}

	if err := client.Unblock(ctx, "member-1"); err != nil {
		t.Fatal(err)
	}
	// The question asked while blocked is delivered now.
	_ = held.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 1)
	if _, err := io.ReadFull(held, buf); err != nil || buf[0] != 'a' {
		t.Errorf("the held connection read %q, %v after Unblock; want a", buf, err)
	}
	if got := ask(t, dial(addrs["member-1"])); got != 'a' {
		t.Errorf("a new member-1 connection answered %q after Unblock, want a", got)
	}
	if _, err := client.Block(ctx, "member-9"); err == nil {
		t.Error("blocking a member without a listener succeeded")
	}
}
