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

package tunnelserver

import (
	"fmt"
	"math"
	"sort"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// QuantityChangeThreshold is the relative change of a resource quantity
// (capacity, allocatable or available, of any resource: cpu, memory, pods...)
// that makes the hub write a member's status again: 5%. Smaller moves stay in
// memory; the status then holds a value within 5% of the member's.
const QuantityChangeThreshold = 0.05

// propertiesChanged reports whether a heartbeat's properties (now) differ
// from those last written to the member's status (written) enough to write
// them again, and names the first difference. It is the one place that says
// what "enough" is, per kind of property:
//
//   - counts and names (node count, Kubernetes version, provider): any change;
//   - health: a flip of APIServerHealthy, or a new message while unhealthy;
//   - resource quantities: a resource appearing or disappearing, or a change of
//     more than QuantityChangeThreshold relative to the written value (from
//     zero: any change).
func propertiesChanged(written, now tunnel.ClusterProperties) (bool, string) {
	switch {
	case written.NodeCount != now.NodeCount:
		return true, "node-count"
	case written.KubernetesVersion != now.KubernetesVersion:
		return true, "kubernetes-version"
	case written.Provider != now.Provider:
		return true, "provider"
	case written.APIServerHealthy != now.APIServerHealthy:
		return true, "health"
	case !now.APIServerHealthy && written.APIServerMessage != now.APIServerMessage:
		return true, "health"
	}
	for _, l := range []struct {
		kind     string
		was, now map[string]string
	}{
		{"capacity", written.Capacity, now.Capacity},
		{"allocatable", written.Allocatable, now.Allocatable},
		{"available", written.Available, now.Available},
	} {
		if name, ok := quantitiesChanged(l.was, l.now); ok {
			return true, fmt.Sprintf("%s/%s", l.kind, name)
		}
	}
	return false, ""
}

// quantitiesChanged compares two resource lists by QuantityChangeThreshold and
// returns the first resource (in name order) that moved beyond it.
func quantitiesChanged(was, now map[string]string) (string, bool) {
	names := make([]string, 0, len(was)+len(now))
	for n := range was {
		names = append(names, n)
	}
	for n := range now {
		if _, ok := was[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		a, okA := was[n]
		b, okB := now[n]
		if okA != okB {
			return n, true
		}
		if a == b {
			continue
		}
		qa, errA := resource.ParseQuantity(a)
		qb, errB := resource.ParseQuantity(b)
		if errA != nil || errB != nil {
			// Not quantities the status can hold anyway: compare as text.
			return n, true
		}
		if relativeChange(qa.AsApproximateFloat64(), qb.AsApproximateFloat64()) > QuantityChangeThreshold {
			return n, true
		}
	}
	return "", false
}

// relativeChange is |b-a| / |a|; from a = 0 any b ≠ 0 is an infinite change.
func relativeChange(a, b float64) float64 {
	if a == b {
		return 0
	}
	if a == 0 {
		return math.Inf(1)
	}
	return math.Abs(b-a) / math.Abs(a)
}
