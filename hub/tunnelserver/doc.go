// Package tunnelserver is the hub end of the agents' tunnels. It runs in every hub
// replica (not only the leader): it serves joins and tunnel sessions on one TLS
// port, keeps each member's heartbeats in memory, writes MemberCluster status only
// on transitions and at a coarse refresh interval, delivers each member its Work
// (on connect only what differs from what the agent holds, then changes as they
// happen) and writes back the Work status the agent reports.
package tunnelserver
