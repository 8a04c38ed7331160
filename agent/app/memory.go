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

package app

import (
	"fmt"
	"runtime/debug"
)

// Go runtime defaults of `agent run`, set at start unless the environment sets
// them ($GOMEMLIMIT, $GOGC; "off" is honoured as the Go runtime defines it).
// See docs/performance/2026-11-23-agent-footprint.md for what they buy.
const (
	// DefaultMemoryLimit is the Go runtime's soft memory limit: the runtime
	// collects garbage, and returns freed memory to the system, more eagerly
	// as its memory nears it. It is not a cap: an agent that needs more (a
	// very large member, many Works) uses more, at the cost of more frequent
	// garbage collection.
	DefaultMemoryLimit = 24 << 20 // 24 MiB
	// DefaultGCPercent is GOGC: the heap may grow by this percentage of the
	// live heap before a collection.
	DefaultGCPercent = 50
)

// runtimeDefaults sets DefaultMemoryLimit and DefaultGCPercent where the
// environment, read through lookup, sets none, and describes what it set.
func runtimeDefaults(lookup func(string) (string, bool)) []string {
	var set []string
	if _, ok := lookup("GOMEMLIMIT"); !ok {
		debug.SetMemoryLimit(DefaultMemoryLimit)
		set = append(set, fmt.Sprintf("GOMEMLIMIT=%dMiB", DefaultMemoryLimit>>20))
	}
	if _, ok := lookup("GOGC"); !ok {
		debug.SetGCPercent(DefaultGCPercent)
		set = append(set, fmt.Sprintf("GOGC=%d", DefaultGCPercent))
	}
	return set
}
