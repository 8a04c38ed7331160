// Package replica makes hub replicas cover for each other. Every replica that
// serves tunnels renews its own Lease (coordination.k8s.io) in the hub
// namespace (Lease); a MemberCluster's status.agentSession names the replica
// that holds its agent's session. The leader's Sweeper records the agents of a
// replica whose Lease expired as disconnected, so that a replica that dies
// does not leave its members AgentConnected=True. Liveness costs one Lease
// write per replica per renewal, not one write per member.
package replica
