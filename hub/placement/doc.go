// Package placement runs the first stage of the placement pipeline: for each
// placement — a ClusterResourcePlacement, or a ResourcePlacement, which selects
// objects of its own namespace and brings that namespace along — it selects
// resources on the hub and records them, and its scheduling policy, as immutable
// snapshots (a new one each time either changes), then reports the placement's
// status from what the later stages (scheduler, rollout, work generator, agents)
// record on the bindings. A placement leaves out the objects an earlier placement
// places (conflicts.go) and refuses selectors naming a reserved namespace
// (reserved.go).
package placement
