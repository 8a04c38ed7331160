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

// Package join defines the join exchange between `agent join` and the hub: one
// JSON request and one JSON response over a TLS connection that negotiated the
// join ALPN protocol (pkg/tunnel.ALPNJoin). The agent pins the hub's CA by hash
// before sending anything, so the token never reaches an impostor.
package join

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// TokenPattern is the shape of a bootstrap token: "<id>.<secret>".
var TokenPattern = regexp.MustCompile(`^([a-z0-9]{6})\.([a-z0-9]{16})$`)

// ParseToken splits a bootstrap token into its id and secret.
func ParseToken(token string) (id, secret string, err error) {
	m := TokenPattern.FindStringSubmatch(token)
	if m == nil {
		return "", "", fmt.Errorf("the token is not of the form [a-z0-9]{6}.[a-z0-9]{16}")
	}
	return m[1], m[2], nil
}

// Action says what a request asks for.
type Action string

const (
	// ActionJoin asks for a member certificate with a bootstrap token.
	ActionJoin Action = "join"
	// ActionLeave asks the hub to forget the member; it must come over mutual TLS
	// with the member's certificate.
	ActionLeave Action = "leave"
	// ActionRenew asks for a new member certificate for CSR; it must come over
	// mutual TLS with the certificate the hub accepts for the member. The
	// answer is a Response like a join's.
	ActionRenew Action = "renew"
)

// Request is what the agent sends.
type Request struct {
	Action Action `json:"action"`
	// Token is the bootstrap token (join only).
	Token string `json:"token,omitempty"`
	// ClusterName is the member's name.
	ClusterName string `json:"clusterName"`
	// Labels become the MemberCluster's labels (join only).
	Labels map[string]string `json:"labels,omitempty"`
	// CSR is a PEM certificate request whose common name is ClusterName; the key
	// was generated on the member and never leaves it (join and renew).
	CSR []byte `json:"csr,omitempty"`
	// AgentVersion is the joining agent's version.
	AgentVersion string `json:"agentVersion,omitempty"`
	// HubAsMember says that the joining cluster is the hub itself (join only;
	// `agent join --hub-as-member`, which checked that the cluster publishes the
	// hub's CA hash in HubInfoConfigMap): the MemberCluster is labelled and tainted
	// as the hub.
	HubAsMember bool `json:"hubAsMember,omitempty"`
}

// HubInfoConfigMap is the ConfigMap in the hub's namespace (flotilla-system) where a
// hub publishes what join commands need; HubInfoKeyCAHash is its key holding the
// hub CA's hash (sha256:<hex>), the value of --discovery-token-ca-cert-hash. The
// agent reads it on the cluster it joins to tell whether that cluster is the hub.
const (
	HubInfoConfigMap = "flotilla-hub-info"
	HubInfoKeyCAHash = "caCertHash"
)

// Response is what the hub answers.
type Response struct {
	// Error, when set, says what went wrong and what to do; nothing else is set.
	Error string `json:"error,omitempty"`
	// Certificate is the member's signed client certificate (PEM).
	Certificate []byte `json:"certificate,omitempty"`
	// CA is the hub's tunnel CA certificate (PEM).
	CA []byte `json:"ca,omitempty"`
}

// maxMessageBytes bounds a join message (a CSR and a few labels).
const maxMessageBytes = 64 << 10

// Read decodes one message of at most maxMessageBytes.
func Read(r io.Reader, v any) error {
	dec := json.NewDecoder(io.LimitReader(r, maxMessageBytes))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("failed to read the join message: %w", err)
	}
	return nil
}

// Write encodes one message.
func Write(w io.Writer, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// ParseLabels parses "k=v,k2=v2".
func ParseLabels(s string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("label %q is not key=value", kv)
		}
		out[k] = v
	}
	return out, nil
}
