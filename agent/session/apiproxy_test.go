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
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/agent/apply"
	"github.com/flotilla-io/flotilla/agent/session"
	"github.com/flotilla-io/flotilla/agent/session/sessiontest"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// memberAPI stands in for agent/proxy: it answers every request with the
// path it was asked for.
type memberAPI struct{}

func (memberAPI) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprintf(w, "member answers %s", r.URL.Path)
	}), ReadHeaderTimeout: 10 * time.Second}
	stop := context.AfterFunc(ctx, func() { _ = srv.Close() })
	defer stop()
	_ = srv.Serve(l)
	return nil
}

// runProxyAgent runs a Runner whose Hello announces capabilities and which
// serves the API proxy with apiProxy (nil: none).
func runProxyAgent(t *testing.T, hub *sessiontest.Hub, capabilities []string, apiProxy session.APIProxyServer) {
	t.Helper()
	ctx, cancel := context.WithCancel(testContext(t))
	applier, err := apply.New(env.Config, apply.Options{Namespace: fmt.Sprintf("records-%d", time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	r, err := session.New(session.Options{Applier: applier, APIProxy: apiProxy})
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig := hub.ClientTLSConfig(t, memberName)
	dial := func(ctx context.Context) (*tunnel.ClientSession, error) {
		return tunnel.Dial(ctx, tunnel.DialOptions{Address: hub.Addr, TLSConfig: tlsConfig,
			ClientOptions: tunnel.ClientOptions{Hello: tunnel.Hello{ClusterName: memberName, Capabilities: capabilities}}})
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.Run(ctx, dial, tunnel.ReconnectOptions{InitialInterval: 100 * time.Millisecond, MaxInterval: time.Second})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func TestRunnerServesTheAPIProxyOfItsSessions(t *testing.T) {
	hub := sessiontest.Start(t, sessiontest.Options{Capabilities: []string{tunnel.CapabilityAPIProxy}})
	runProxyAgent(t, hub, []string{tunnel.CapabilityAPIProxy}, memberAPI{})
	s := hub.NextSession(t, wait)

	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	for _, path := range []string{"/api", "/apis/apps/v1"} { // two streams, one after the other
		conn, err := s.S.OpenAPIProxy(ctx)
		if err != nil {
			t.Fatalf("OpenAPIProxy: %v", err)
		}
		_ = conn.SetDeadline(time.Now().Add(wait))
		if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: member\r\nConnection: close\r\n\r\n", path); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("reading the member's answer: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		_ = conn.Close()
		if want := "member answers " + path; string(body) != want {
			t.Errorf("the member answered %q, want %q", body, want)
		}
	}
}

func TestRunnerWithoutTheProxyIsNeverOfferedAStream(t *testing.T) {
	hub := sessiontest.Start(t, sessiontest.Options{Capabilities: []string{tunnel.CapabilityAPIProxy}})
	runProxyAgent(t, hub, nil, nil) // agent run --proxy=false
	s := hub.NextSession(t, wait)
	if _, err := s.S.OpenAPIProxy(t.Context()); !errors.Is(err, tunnel.ErrAPIProxyUnavailable) {
		t.Errorf("OpenAPIProxy = %v, want ErrAPIProxyUnavailable", err)
	}
}
