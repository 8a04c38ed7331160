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

package locations

import (
	"time"

	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// Name is the plugin's name.
const Name = "Locations"

// Plugin chooses a placement's Location.
type Plugin struct {
	grace time.Duration
}

var _ framework.PreFilterPlugin = &Plugin{}

// New returns the plugin. gracePeriod is the disconnected grace period used to
// judge whether a Location has an eligible cluster; zero means
// framework.DefaultDisconnectedGracePeriod.
func New(gracePeriod time.Duration) *Plugin {
	if gracePeriod <= 0 {
		gracePeriod = framework.DefaultDisconnectedGracePeriod
	}
	return &Plugin{grace: gracePeriod}
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }
