// Package properties gathers the member cluster's properties that the agent
// reports to the hub in every heartbeat: node count, Kubernetes version,
// infrastructure provider, capacity, allocatable and available resources,
// and the health of the member API server.
//
// A Collector refreshes them in the background at its own pace (listing
// nodes and pods is not free, and a heartbeat must never wait for it);
// Latest returns the last values collected, at once.
package properties
