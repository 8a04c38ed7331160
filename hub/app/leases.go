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

package app

import (
	"net"
	"time"

	"k8s.io/client-go/rest"
)

// leaseConfig returns cfg for the hub's Lease renewals (the leader's lease and
// this replica's Lease) on a connection of their own.
//
// client-go shares one HTTP/2 connection among every client of the same
// configuration, and a request waits there for a free stream behind every
// request sent before it. When ten thousand members connect at once, the
// tunnel server's status writes fill that connection for tens of seconds; a
// renewal queued behind them missed its deadline, this replica stopped
// serving its 6 489 sessions, and then the leader lost its lease and the hub
// exited (fleetsim, 10 000 members, 2026-11-28). A dialer of their own gives
// the renewals a transport, and so a connection, of their own; the API
// server's priority levels (the FlowSchema in the hub's manifests) keep them
// ahead there.
func leaseConfig(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.UserAgent = rest.DefaultKubernetesUserAgent() + " flotilla-hub-leases"
	if c.Dial == nil {
		// client-go caches transports by configuration; one with a dialer
		// of its own is not shared.
		c.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	return c
}
