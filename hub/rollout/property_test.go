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

package rollout

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// A generative test of wave selection: over random rollouts (bindings in every
// state, readiness coming and going, new resources, clusters scheduled and
// unscheduled), carrying every wave out, the rollout never takes down more Ready
// clusters than maxUnavailable allows, never puts resources on more clusters
// than maxSurge allows, gives every binding a step, and, when nothing changes
// under it, ends with every active binding current.

type rolloutModel struct {
	target, maxUnavailable, maxSurge int
	bindings                         map[string]*Binding
	next                             int
}

func (m *rolloutModel) input() Input {
	in := Input{Target: m.target, MaxUnavailable: m.maxUnavailable, MaxSurge: m.maxSurge}
	for _, name := range sortedNames(m.bindings) {
		in.Bindings = append(in.Bindings, *m.bindings[name])
	}
	return in
}

// active counts the bindings that are Scheduled or Bound.
func (m *rolloutModel) active() int {
	n := 0
	for _, b := range m.bindings {
		if b.State != placementv1beta1.BindingStateUnscheduled {
			n++
		}
	}
	return n
}

func sortedNames(m map[string]*Binding) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// wave selects a wave, checks it, and carries it out: a moved binding is not
// Ready until the readiness action says so.
func (m *rolloutModel) wave(t *rapid.T) Plan {
	in := m.input()
	plan := SelectWave(in)
	ready, occupied, present := 0, 0, 0
	for _, b := range in.Bindings {
		if b.HasResources || b.State != placementv1beta1.BindingStateUnscheduled {
			present++
		}
		if b.HasResources {
			occupied++
			if b.Ready {
				ready++
			}
		}
	}
	takenDown, added, removed := 0, 0, 0
	for _, b := range in.Bindings {
		step, ok := plan.Steps[b.Name]
		if !ok {
			t.Fatalf("binding %s has no step", b.Name)
		}
		switch step.Action {
		case ActionRemove:
			if b.State != placementv1beta1.BindingStateUnscheduled {
				t.Fatalf("binding %s in state %s removed", b.Name, b.State)
			}
			if b.Ready {
				takenDown++
			}
			if b.HasResources {
				removed++
			}
		case ActionUpdate:
			if b.State != placementv1beta1.BindingStateBound || b.Current {
				t.Fatalf("binding %s (state %s, current %v) updated", b.Name, b.State, b.Current)
			}
			if b.Ready {
				takenDown++
			}
		case ActionBind:
			if b.State != placementv1beta1.BindingStateScheduled {
				t.Fatalf("binding %s in state %s bound", b.Name, b.State)
			}
			added++
		case ActionHold:
			if step.Why == "" {
				t.Fatalf("binding %s held with no reason", b.Name)
			}
		}
	}
	if minAvailable := max(min(m.target, present)-m.maxUnavailable, 0); takenDown > 0 && ready-takenDown < minAvailable {
		t.Fatalf("the wave takes %d of %d Ready clusters down, below min(target %d, %d clusters there) - maxUnavailable %d",
			takenDown, ready, m.target, present, m.maxUnavailable)
	}
	if added > 0 && occupied-removed+added > m.target+m.maxSurge {
		t.Fatalf("the wave puts resources on %d clusters, above target %d + maxSurge %d", occupied-removed+added, m.target, m.maxSurge)
	}
	for name, step := range plan.Steps {
		b := m.bindings[name]
		switch step.Action {
		case ActionRemove:
			delete(m.bindings, name)
		case ActionUpdate, ActionBind:
			b.State, b.HasResources, b.Current, b.Ready, b.NotReady = placementv1beta1.BindingStateBound, true, true, false, "applying"
		}
	}
	return plan
}

func TestWaveSelectionInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := &rolloutModel{
			target:         rapid.IntRange(0, 6).Draw(t, "target"),
			maxUnavailable: rapid.IntRange(1, 3).Draw(t, "maxUnavailable"),
			maxSurge:       rapid.IntRange(0, 3).Draw(t, "maxSurge"),
			bindings:       map[string]*Binding{},
		}
		pick := func(t *rapid.T) *Binding {
			if len(m.bindings) == 0 {
				t.Skip("no binding")
			}
			return m.bindings[rapid.SampledFrom(sortedNames(m.bindings)).Draw(t, "binding")]
		}
		t.Repeat(map[string]func(*rapid.T){
			"schedule a cluster": func(t *rapid.T) {
				if m.active() >= m.target {
					t.Skip("the scheduler places no more than the target")
				}
				m.next++
				name := fmt.Sprintf("b%02d", m.next)
				m.bindings[name] = &Binding{Name: name, Cluster: "c" + name, State: placementv1beta1.BindingStateScheduled, NotReady: "not bound"}
			},
			"unschedule a cluster": func(t *rapid.T) {
				if b := pick(t); b.State != placementv1beta1.BindingStateUnscheduled {
					b.State = placementv1beta1.BindingStateUnscheduled
				}
			},
			"resources become available": func(t *rapid.T) {
				if b := pick(t); b.HasResources {
					b.Ready, b.NotReady = true, ""
				}
			},
			"a cluster fails": func(t *rapid.T) {
				if b := pick(t); b.HasResources {
					b.Ready, b.NotReady = false, "cluster down"
				}
			},
			"new resources": func(t *rapid.T) {
				for _, b := range m.bindings {
					b.Current = false
				}
			},
			"a wave": func(t *rapid.T) { m.wave(t) },
		})
		// With nothing changing, waves (each followed by availability) bring
		// every active binding to the latest resources.
		for range 3 * (len(m.bindings) + 1) {
			m.wave(t)
			for _, b := range m.bindings {
				if b.HasResources {
					b.Ready, b.NotReady = true, ""
				}
			}
		}
		for _, b := range m.bindings {
			if b.State == placementv1beta1.BindingStateUnscheduled || b.State == placementv1beta1.BindingStateScheduled ||
				(b.State == placementv1beta1.BindingStateBound && !b.Current) {
				t.Fatalf("binding %s stuck in state %s (current %v) with nothing changing: %+v", b.Name, b.State, b.Current, m.input())
			}
		}
	})
}
