package tunnel

import (
	"context"
	"testing"

	"github.com/go-logr/logr/testr"

	"github.com/flotilla-io/flotilla/pkg/tunnel/internal/testpki"
)

func TestOnTunnelContextEndsWhenTheAgentCloses(t *testing.T) {
	pki := testpki.New()
	ended := make(chan struct{})
	addr, stop := startServer(t, &Server{
		TLSConfig: pki.ServerTLSConfig(),
		Tunnel:    ServerOptions{YamuxConfig: quietYamux()},
		Logger:    testr.NewWithOptions(t, testr.Options{Verbosity: 2}),
		OnTunnel: func(ctx context.Context, s *ServerSession) {
			<-ctx.Done()
			close(ended)
		},
	})
	defer stop()
	s, err := Dial(t.Context(), dialOptions(pki, addr, "member-1", "member-1"))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	s.Close()
	waitClosed(t, ended, "OnTunnel's context")
}
