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
	"context"
	"crypto/tls"

	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/agent/apply"
	"github.com/flotilla-io/flotilla/agent/properties"
	"github.com/flotilla-io/flotilla/agent/session"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// The agent's run loop: apply what the hub sends, heartbeat with the member's
// properties, and stay connected until ctx ends.
func ExampleRunner() {
	ctx := context.Background()
	member := &rest.Config{Host: "https://member.example.com:6443"}
	applier, err := apply.New(member, apply.Options{})
	if err != nil {
		panic(err)
	}
	collector, err := properties.New(member, properties.Options{})
	if err != nil {
		panic(err)
	}
	go collector.Run(ctx)

	r, err := session.New(session.Options{Applier: applier, Properties: collector})
	if err != nil {
		panic(err)
	}
	dial := func(ctx context.Context) (*tunnel.ClientSession, error) {
		return tunnel.Dial(ctx, tunnel.DialOptions{
			Address:       "hub.example.com:8443",
			TLSConfig:     &tls.Config{ /* the identity `agent join` stored */ },
			ClientOptions: tunnel.ClientOptions{Hello: tunnel.Hello{ClusterName: "member-1"}},
		})
	}
	_ = r.Run(ctx, dial, tunnel.ReconnectOptions{})
}
