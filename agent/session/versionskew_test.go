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

package session

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

func TestCheckHub(t *testing.T) {
	cases := map[string]struct {
		agent string
		ack   tunnel.HelloAck
		// says is part of the error; "" for none.
		says string
	}{
		"a hub of the same minor version is accepted":         {"v0.2.0", tunnel.HelloAck{Accepted: true, HubVersion: "v0.2.3"}, ""},
		"a hub one minor version older is accepted":           {"v0.2.0", tunnel.HelloAck{Accepted: true, HubVersion: "v0.1.0"}, ""},
		"a hub that announces no version is accepted":         {"v0.2.0", tunnel.HelloAck{Accepted: true}, ""},
		"a development hub is accepted":                       {"v0.2.0", tunnel.HelloAck{Accepted: true, HubVersion: "v0.0.0-dev"}, ""},
		"a hub two minor versions older is an error":          {"v0.4.0", tunnel.HelloAck{Accepted: true, HubVersion: "v0.2.0"}, "hub v0.2.0 and agent v0.4.0"},
		"a refusing hub beyond the skew is an error too":      {"v0.4.0", tunnel.HelloAck{Reason: "skew", HubVersion: "v0.2.0"}, "upgrade the hub first"},
		"a refusing hub within the skew is left to the retry": {"v0.2.0", tunnel.HelloAck{Reason: "no certificate", HubVersion: "v0.2.0"}, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := CheckHub(tc.agent, logr.Discard())(tc.ack)
			if tc.says == "" {
				if err != nil {
					t.Fatalf("CheckHub = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("CheckHub = %v, want an error saying %q", err, tc.says)
			}
		})
	}
}

func TestPermanent(t *testing.T) {
	cases := map[string]struct {
		err  error
		want bool
	}{
		"version skew stops the agent":         {fmt.Errorf("%w: skew", tunnel.ErrIncompatiblePeer), true},
		"a missing capability stops the agent": {fmt.Errorf("%w: x", tunnel.ErrMissingCapability), true},
		"a refusal is retried":                 {&tunnel.RefusedError{Reason: "leaving"}, false},
		"a network error is retried":           {errors.New("connection refused"), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Permanent(tc.err); got != tc.want {
				t.Errorf("Permanent(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
