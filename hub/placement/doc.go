// Package placement runs the first stage of the placement pipeline: for each
// ClusterResourcePlacement it selects resources on the hub and records them, and
// its scheduling policy, as immutable snapshots (a new one each time either
// changes), then reports the placement's status from what the later stages
// (scheduler, rollout, work generator, agents) record on the bindings.
package placement
