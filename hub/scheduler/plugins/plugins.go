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

package plugins

import (
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins/clusteraffinity"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins/clustereligibility"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins/clusterpreferences"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins/evicted"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins/locations"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins/placementaffinity"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins/sameplacementantiaffinity"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins/strictlabels"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins/tainttoleration"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins/topologyspread"
)

// NewFramework returns a framework with the default plugins: the scheduler's entry
// point.
func NewFramework(opts framework.Options) *framework.Framework {
	return framework.NewWithPlugins(opts, Default(opts)...)
}

// Default returns the built-in plugins in the order they run. The order decides
// which plugin a decision names when several would reject a cluster: an eviction
// (the user's explicit word) comes first, then the policy's own criteria
// (Location, cluster affinity, cluster preferences, strict labels, placement
// affinity), then the cluster's passing state (eligibility, taints), and
// topology spread, which depends on the clusters picked, comes last.
func Default(opts framework.Options) []framework.Plugin {
	opts = opts.WithDefaults()
	return []framework.Plugin{
		evicted.New(),
		locations.New(opts.DisconnectedGracePeriod),
		sameplacementantiaffinity.New(),
		clusteraffinity.New(),
		clusterpreferences.New(),
		strictlabels.New(),
		placementaffinity.New(),
		clustereligibility.New(opts.DisconnectedGracePeriod),
		tainttoleration.New(),
		topologyspread.New(),
	}
}
