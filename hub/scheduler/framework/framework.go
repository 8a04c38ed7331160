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

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Framework runs scheduling cycles with a fixed set of plugins. It holds no state
// between cycles and is safe for concurrent use as long as its plugins are (the
// built-in ones keep all per-cycle data in the CycleState).
type Framework struct {
	opts    Options
	entries []entry
	// buffers holds the per-cluster arrays of finished cycles (*buffers) for
	// the next ones.
	buffers sync.Pool
}

// entry is a registered plugin and the extension points it implements.
type entry struct {
	name      string
	postBatch PostBatchPlugin
	preFilter PreFilterPlugin
	filter    FilterPlugin
	narrowing NarrowingPlugin
	preScore  PreScorePlugin
	score     ScorePlugin
	reserve   ReservePlugin
}

// NewWithPlugins returns a framework that runs plugins, in this order, at every
// extension point they implement. The plugins package builds the default set
// (plugins.NewFramework). It panics if two plugins share a name or a plugin
// implements no extension point: both are programming errors.
func NewWithPlugins(opts Options, plugins ...Plugin) *Framework {
	f := &Framework{opts: opts.WithDefaults()}
	if len(plugins) > 64 {
		panic(fmt.Sprintf("%d scheduler plugins registered; at most 64 are supported", len(plugins)))
	}
	seen := map[string]bool{}
	for _, p := range plugins {
		name := p.Name()
		if seen[name] {
			panic(fmt.Sprintf("scheduler plugin %q registered twice", name))
		}
		seen[name] = true
		e := entry{name: name}
		e.postBatch, _ = p.(PostBatchPlugin)
		e.preFilter, _ = p.(PreFilterPlugin)
		e.filter, _ = p.(FilterPlugin)
		e.narrowing, _ = p.(NarrowingPlugin)
		e.preScore, _ = p.(PreScorePlugin)
		e.score, _ = p.(ScorePlugin)
		e.reserve, _ = p.(ReservePlugin)
		if e.postBatch == nil && e.preFilter == nil && e.filter == nil && e.preScore == nil && e.score == nil && e.reserve == nil {
			panic(fmt.Sprintf("scheduler plugin %q implements no extension point", name))
		}
		f.entries = append(f.entries, e)
	}
	return f
}

// Options returns the framework's options, with defaults filled in.
func (f *Framework) Options() Options { return f.opts }

// PluginNames returns the names of the framework's plugins, in order.
func (f *Framework) PluginNames() []string {
	names := make([]string, len(f.entries))
	for i, e := range f.entries {
		names[i] = e.name
	}
	return names
}

// RunCycle runs one scheduling cycle: it decides which clusters the placement must
// be on after the cycle, given where it is now (in.Bindings), and explains the
// decision for every cluster. It does not modify in.
//
// An error means the policy could not be evaluated (for example an invalid label
// selector); the result then still carries a ScheduleFailed condition saying so,
// which the caller may record, but no decisions.
func (f *Framework) RunCycle(ctx context.Context, in CycleInput) (CycleResult, error) {
	start := time.Now()
	c := newCycle(f, &in)
	defer f.putBuffers(c.buffers)
	err := c.run(ctx)
	if err == nil {
		err = c.settle(ctx)
	}
	if err != nil {
		res := failedResult(err)
		observeCycle(c.kind, &res, err, time.Since(start))
		return res, err
	}
	res := c.result()
	observeCycle(c.kind, &res, nil, time.Since(start))
	return res, nil
}
