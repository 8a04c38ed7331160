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
	"testing"

	"k8s.io/client-go/rest"
)

// The Lease renewals get a transport, and so an HTTP/2 connection, of their
// own: client-go shares one among clients of equal configurations, and a
// renewal queued there behind thousands of status writes missed its deadline.
func TestLeaseRenewalsHaveAConnectionOfTheirOwn(t *testing.T) {
	cfg := &rest.Config{Host: "https://hub.example:6443", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	shared, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := rest.TransportFor(rest.CopyConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if shared != again {
		t.Fatal("client-go no longer shares the transport of equal configurations: this test checks nothing")
	}
	leases, err := rest.TransportFor(leaseConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if leases == shared {
		t.Error("the Lease renewals share the transport of the hub's other clients")
	}
	if cfg.Dial != nil {
		t.Error("leaseConfig changed the configuration it was given")
	}
}
