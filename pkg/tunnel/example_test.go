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

package tunnel_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"time"

	"github.com/flotilla-io/flotilla/pkg/tunnel"
	"github.com/flotilla-io/flotilla/pkg/tunnel/internal/testpki"
)

// A hub serving tunnels, and an agent dialing it and syncing its Work.
func Example() {
	pki := testpki.New() // a throwaway CA; the hub signs agent certificates at join
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The hub: one TLS port for tunnels and joins.
	hub := &tunnel.Server{
		TLSConfig: pki.ServerTLSConfig(),
		Tunnel:    tunnel.ServerOptions{ReplicaName: "hub-0"},
		OnTunnel: func(ctx context.Context, s *tunnel.ServerSession) {
			m, err := s.Work().Recv()
			if err != nil {
				return
			}
			inventory := m.(tunnel.WorkInventory)
			fmt.Printf("hub: %s holds %d Work\n", s.PeerName(), len(inventory.Items))
			// Send the difference, then mark the end of the sync.
			_ = s.Work().Send(tunnel.WorkUpsert{Name: "web", Hash: "h1", Work: json.RawMessage(`{"kind":"Work"}`)})
			_ = s.Work().Send(tunnel.WorkSyncDone{})
			<-ctx.Done()
		},
		OnJoin: func(ctx context.Context, conn *tls.Conn) { /* exchange a token for a certificate */ },
	}
	go func() { _ = hub.Serve(ctx, l) }()

	// The agent.
	s, err := tunnel.Dial(ctx, tunnel.DialOptions{
		Address:   l.Addr().String(),
		TLSConfig: pki.ClientTLSConfig("member-1"),
		ClientOptions: tunnel.ClientOptions{
			Hello: tunnel.Hello{ClusterName: "member-1", AgentVersion: "v0.1.0"},
		},
	})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	fmt.Printf("agent: connected to %s, heartbeat every %ds\n", s.HelloAck().HubReplica, s.HelloAck().HeartbeatPeriodSeconds)

	if err := s.Work().Send(tunnel.WorkInventory{}); err != nil {
		panic(err)
	}
	for {
		m, err := s.Work().Recv()
		if err != nil {
			panic(err)
		}
		switch m := m.(type) {
		case tunnel.WorkUpsert:
			fmt.Printf("agent: apply %s at %s\n", m.Name, m.Hash)
		case tunnel.WorkDelete:
			fmt.Printf("agent: delete %s\n", m.Name)
		case tunnel.WorkSyncDone:
			fmt.Println("agent: in sync")
			return
		}
	}
	// Output:
	// agent: connected to hub-0, heartbeat every 5s
	// hub: member-1 holds 0 Work
	// agent: apply web at h1
	// agent: in sync
}

// The agent keeps its tunnel up with RunWithReconnect.
func ExampleRunWithReconnect() {
	ctx := context.Background()
	opts := tunnel.DialOptions{
		Address:   "hub.example.com:8443",
		TLSConfig: &tls.Config{ /* the certificate, key and CA stored at join */ },
		ClientOptions: tunnel.ClientOptions{
			Hello: tunnel.Hello{ClusterName: "member-1", AgentVersion: "v0.1.0"},
		},
	}
	_ = tunnel.RunWithReconnect(ctx,
		func(ctx context.Context) (*tunnel.ClientSession, error) { return tunnel.Dial(ctx, opts) },
		func(ctx context.Context, s *tunnel.ClientSession) error {
			// Heartbeat on s.Control(), sync Work on s.Work(), report on
			// s.Status(), until ctx ends (the session closed or the agent
			// is stopping).
			period := time.Duration(s.HelloAck().HeartbeatPeriodSeconds) * time.Second
			ticker := time.NewTicker(period)
			defer ticker.Stop()
			for seq := uint64(1); ; seq++ {
				select {
				case <-ctx.Done():
					return nil
				case <-ticker.C:
					if err := s.Control().Send(tunnel.Heartbeat{Sequence: seq, SentAt: time.Now()}); err != nil {
						return err
					}
				}
			}
		},
		tunnel.ReconnectOptions{})
}
