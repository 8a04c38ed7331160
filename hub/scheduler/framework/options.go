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

package framework

import "time"

// Defaults of Options.
const (
	// DefaultDisconnectedGracePeriod is the default Options.DisconnectedGracePeriod.
	DefaultDisconnectedGracePeriod = 60 * time.Second
	// DefaultMaxMessageClusters is the default Options.MaxMessageClusters.
	DefaultMaxMessageClusters = 10
)

// Options configure a Framework and its plugins.
type Options struct {
	// DisconnectedGracePeriod is how long a cluster whose agent is disconnected
	// (AgentConnected False or Unknown) stays eligible for new placements, counted
	// from the condition's lastTransitionTime. Default: 60s.
	DisconnectedGracePeriod time.Duration

	// MaxMessageClusters is how many left-out clusters the Scheduled condition's
	// message names, with their reasons, before it only counts the rest. Default: 10.
	MaxMessageClusters int
}

// WithDefaults returns the options with every unset field set to its default.
func (o Options) WithDefaults() Options {
	if o.DisconnectedGracePeriod <= 0 {
		o.DisconnectedGracePeriod = DefaultDisconnectedGracePeriod
	}
	if o.MaxMessageClusters <= 0 {
		o.MaxMessageClusters = DefaultMaxMessageClusters
	}
	return o
}
