// Package install runs the agent inside its member cluster: `agent join
// --install` applies manifests/agent (embedded in the binary) with the agent
// image and waits until the agent pod runs with the identity join stored. What
// it cannot install it names, and it rolls back what it made.
package install
