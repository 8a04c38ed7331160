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

package strictlabels

import (
	"k8s.io/apimachinery/pkg/labels"

	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// pluginState holds the placement's label selectors for the cycle.
type pluginState struct {
	// selectors are the label selectors of the effective required terms that have
	// label requirements.
	selectors []labels.Selector
}

// readState is the typed getter of the plugin's cycle state.
func readState(cs *framework.CycleState) (*pluginState, error) {
	return framework.ReadState[*pluginState](cs, Name)
}
