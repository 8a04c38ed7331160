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

// Package session is the agent's end of the tunnel: it keeps one session to
// the hub up (redialing with backoff when it drops) and, within each session,
//
//   - heartbeats on the control stream every period the hub announced, with
//     the member cluster's last known properties, so that a slow API server
//     never delays a heartbeat;
//   - states the Works it holds on the work stream, then applies what the hub
//     sends: asynchronously, one Work at a time per name, coalescing to the
//     newest spec, and never re-applying a spec it already applied;
//   - reports each Work's status on the status stream after every apply, when
//     re-evaluating Works that are not yet available changes it, and again
//     for every Work after a reconnect.
//
// What the agent applied outlives sessions: a lost connection is not a
// delete, and the state of each Work is kept across reconnects.
package session
