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
	"testing"

	"github.com/go-logr/logr/testr"

	"github.com/flotilla-io/flotilla/pkg/tunnel/internal/testpki"
)

func TestOnTunnelContextEndsWhenTheAgentCloses(t *testing.T) {
	pki := testpki.New()
	started, ended := make(chan struct{}), make(chan struct{})
	addr, stop := startServer(t, &Server{
		TLSConfig: pki.ServerTLSConfig(),
		Tunnel:    ServerOptions{YamuxConfig: quietYamux()},
		Logger:    testr.NewWithOptions(t, testr.Options{Verbosity: 2}),
		OnTunnel: func(ctx context.Context, s *ServerSession) {
			close(started)
			<-ctx.Done()
			close(ended)
		},
	})
	defer stop()
	s, err := Dial(t.Context(), dialOptions(pki, addr, "member-1", "member-1"))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	// Close once the hub holds the session: an agent that hangs up while the
	// hub is still writing HelloAck ends the handshake, not an established
	// session, and OnTunnel is never called.
	waitClosed(t, started, "OnTunnel")
	s.Close()
	waitClosed(t, ended, "OnTunnel's context")
}
