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
