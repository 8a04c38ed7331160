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
	"math"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Action is what the rolling update does with one binding now.
type Action string

const (
	// ActionNone: the binding is on the latest resources, or it is not the
	// rollout's to move (being deleted).
	ActionNone Action = "None"
	// ActionBind: a newly scheduled binding becomes Bound to the latest resources.
	ActionBind Action = "Bind"
	// ActionUpdate: a Bound binding moves to the latest resources.
	ActionUpdate Action = "Update"
	// ActionRemove: an Unscheduled binding is deleted, which removes its
	// resources from its cluster.
	ActionRemove Action = "Remove"
	// ActionHold: the binding must wait; Why says for what.
	ActionHold Action = "Hold"
)

// Binding is what wave selection knows of one binding.
type Binding struct {
	// Name is the binding's name; Cluster its target cluster.
	Name    string
	Cluster string
	// State is the binding's spec.state.
	State placementv1beta1.BindingState
	// HasResources: the cluster may hold this binding's resources (it is Bound,
	// or was Bound before it was unscheduled).
	HasResources bool
	// Current: Bound to the latest resource snapshot with the placement's
	// current apply strategy.
	Current bool
	// Ready: the binding's resources are Available on its cluster (for resources
	// the agent cannot track, unavailablePeriodSeconds have passed since they were
	// applied).
	Ready bool
	// NotReady says why a binding with resources is not Ready ("" when Ready).
	NotReady string
}

// Input is everything wave selection looks at.
type Input struct {
	// Target is how many clusters the placement should be on: numberOfClusters
	// (PickN), the number of clusterNames (PickFixed), or the number of active
	// bindings (PickAll).
	Target int
	// MaxUnavailable and MaxSurge are the resolved limits (see Limits).
	MaxUnavailable int
	MaxSurge       int
	// Bindings are the placement's bindings that are not being deleted.
	Bindings []Binding
	// Window, when not nil, is the step of every binding that would otherwise
	// be bound, updated or held for the budget: the maintenance windows hold the
	// rollout (see WindowHold). Removals are not held by it.
	Window *Step
}

// Step is the decision for one binding.
type Step struct {
	// Action is what to do now.
	Action Action
	// Why explains a Hold (for the binding's RolloutStarted=False message).
	Why string
	// Reason is the RolloutStarted reason of a Hold; empty means
	// RolloutNotStartedYet (held within maxUnavailable and maxSurge).
	Reason string
}

// Plan is the outcome of wave selection: a step for every input binding, by name.
type Plan struct {
	Steps map[string]Step
	// Holders are the clusters whose unavailability uses up maxUnavailable (the
	// ones that hold the rollout), sorted; each with why it is unavailable.
	Holders []string
}

// Limits resolves maxUnavailable (a number, or a percentage of target rounded
// down but at least one) and maxSurge (a number, or a percentage of target
// rounded up). Unset values take the API defaults (25%).
func Limits(cfg *placementv1beta1.RollingUpdateConfig, target int) (maxUnavailable, maxSurge int) {
	def := intstr.FromString("25%")
	mu, ms := &def, &def
	if cfg != nil && cfg.MaxUnavailable != nil {
		mu = cfg.MaxUnavailable
	}
	if cfg != nil && cfg.MaxSurge != nil {
		ms = cfg.MaxSurge
	}
	return scaled(mu, target, false), scaled(ms, target, true)
}

func scaled(v *intstr.IntOrString, target int, roundUp bool) int {
	if v.Type == intstr.Int {
		return max(v.IntValue(), 0)
	}
	var pct int
	if _, err := fmt.Sscanf(v.StrVal, "%d%%", &pct); err != nil || pct <= 0 {
		return 0
	}
	f := float64(pct) * float64(target) / 100
	if roundUp {
		return int(math.Ceil(f))
	}
	return max(int(math.Floor(f)), 1)
}

// SelectWave decides which bindings may move now, KubeFleet's rolling update:
//
//   - At least Target-MaxUnavailable clusters must stay Ready, Target counting
//     only clusters that are there: the bindings that are active or hold
//     resources (a PickN placement the fleet cannot fill, or a PickFixed one
//     naming a cluster that does not exist, would otherwise never roll out).
//     Updating or removing a Ready binding takes one from that budget; a binding
//     that is not Ready (failed, still becoming available, cluster down) may be
//     updated or removed at any time, because moving it makes nothing less
//     available.
//   - At most Target+MaxSurge clusters may hold resources. Binding a newly
//     scheduled cluster takes one from that budget; removals free room first.
//   - Unscheduled bindings that never held resources are removed at once.
//   - Removals go first, then updates of bindings that are not Ready, then the
//     rest, each in the order of cluster names, so that waves are predictable.
//
// A binding that was updated stays not Ready until its resources are Available,
// so it keeps the budget used until then: a cluster whose apply fails or whose
// resources never become Available holds the rollout, and later clusters keep
// the old resources.
//
// Maintenance windows (Input.Window set): no binding is bound or updated, not
// even one that is not Ready; each of them takes the Window step instead, which
// says when the next window opens. Removals are decided as above and never wait
// for a window: a cluster the placement no longer has (evicted, failed over,
// dropped by the policy) is emptied within maxUnavailable at any time. A
// binding the rollout already moved keeps moving (its resources become
// Available on their own; nothing is sent to it again).
func SelectWave(in Input) Plan {
	plan := Plan{Steps: map[string]Step{}}
	bs := append([]Binding(nil), in.Bindings...)
	sort.Slice(bs, func(i, j int) bool {
		if bs[i].Ready != bs[j].Ready {
			return !bs[i].Ready
		}
		return bs[i].Cluster < bs[j].Cluster
	})
	ready, occupied, present := 0, 0, 0
	var unavailable []string
	for _, b := range bs {
		if b.HasResources || b.State != placementv1beta1.BindingStateUnscheduled {
			present++
		}
		if !b.HasResources {
			continue
		}
		occupied++
		if b.Ready {
			ready++
		} else if b.State != placementv1beta1.BindingStateUnscheduled {
			unavailable = append(unavailable, fmt.Sprintf("%s (%s)", b.Cluster, b.NotReady))
		}
	}
	sort.Strings(unavailable)
	minAvailable := max(min(in.Target, present)-in.MaxUnavailable, 0)
	canTakeDown := ready - minAvailable
	holdDown := func() string {
		if len(unavailable) > 0 {
			plan.Holders = unavailable
			return fmt.Sprintf("maxUnavailable %d of %d clusters is used up: waiting for %s", in.MaxUnavailable, in.Target, strings.Join(unavailable, ", "))
		}
		return fmt.Sprintf("only %d of %d target clusters are available and maxUnavailable is %d", ready, in.Target, in.MaxUnavailable)
	}

	// Removals.
	removal := map[string]bool{}
	for _, b := range bs {
		if b.State != placementv1beta1.BindingStateUnscheduled {
			continue
		}
		removal[b.Name] = true
		switch {
		case !b.HasResources:
			plan.Steps[b.Name] = Step{Action: ActionRemove}
		case !b.Ready:
			plan.Steps[b.Name] = Step{Action: ActionRemove}
			occupied--
		case canTakeDown > 0:
			plan.Steps[b.Name] = Step{Action: ActionRemove}
			canTakeDown--
			occupied--
		default:
			plan.Steps[b.Name] = Step{Action: ActionHold, Why: "removal waits: " + holdDown()}
		}
	}
	// Newly scheduled clusters.
	canAdd := in.Target + in.MaxSurge - occupied
	for _, b := range bs {
		if b.State != placementv1beta1.BindingStateScheduled {
			continue
		}
		if canAdd > 0 {
			plan.Steps[b.Name] = Step{Action: ActionBind}
			canAdd--
			continue
		}
		plan.Steps[b.Name] = Step{Action: ActionHold, Why: fmt.Sprintf("maxSurge %d allows no more than %d clusters with resources (target %d): waiting for a cluster to be removed", in.MaxSurge, in.Target+in.MaxSurge, in.Target)}
	}
	// Updates of Bound bindings.
	for _, b := range bs {
		if b.State != placementv1beta1.BindingStateBound {
			continue
		}
		switch {
		case b.Current:
			plan.Steps[b.Name] = Step{Action: ActionNone}
		case !b.Ready:
			plan.Steps[b.Name] = Step{Action: ActionUpdate}
		case canTakeDown > 0:
			plan.Steps[b.Name] = Step{Action: ActionUpdate}
			canTakeDown--
		default:
			plan.Steps[b.Name] = Step{Action: ActionHold, Why: holdDown()}
		}
	}
	if in.Window != nil {
		for name, step := range plan.Steps {
			if step.Action == ActionBind || step.Action == ActionUpdate || (step.Action == ActionHold && !removal[name]) {
				plan.Steps[name] = *in.Window
			}
		}
	}
	return plan
}
