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

// Package join is the member side of joining the fleet and leaving it.
//
// Join (`agent join`) generates the agent's private key on the member (it
// never leaves the member), sends a certificate request with a bootstrap token
// to the hub over TLS whose CA it pins by hash, and stores the signed
// certificate, the key and the hub's CA in the identity Secret on the member.
// `agent run` loads that Identity to open its tunnel. Leave (`agent leave`)
// removes what the agent applied, tells the hub over mutual TLS, and deletes
// the identity.
//
// With Options.HubAsMember the member is the hub cluster itself, joined so that
// placements can place placements (compound placements): Join first checks that
// the cluster publishes the CA hash it pins, the hub labels and taints the
// MemberCluster as the hub, and the identity remembers it (Identity.HubAsMember)
// so that `agent run` applies as apply.Options.OnHub says.
//
// Every error these functions return is one line that says what went wrong
// and what to do about it, ready to print.
package join
