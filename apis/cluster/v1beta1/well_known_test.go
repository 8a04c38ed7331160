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

package v1beta1_test

import (
	"testing"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
)

// The names below are part of the API contract (design/API.md); these tests pin
// them so that a change is deliberate.

func TestWellKnownNames(t *testing.T) {
	pinned := map[string]string{
		clusterv1beta1.ConditionJoined:             "Joined",
		clusterv1beta1.ConditionAgentConnected:     "AgentConnected",
		clusterv1beta1.ConditionHealthy:            "Healthy",
		clusterv1beta1.LabelClusterName:            "cluster.flotilla.io/name",
		clusterv1beta1.LabelKubernetesVersion:      "cluster.flotilla.io/kubernetes-version",
		clusterv1beta1.LabelProvider:               "cluster.flotilla.io/provider",
		clusterv1beta1.TaintUnreachable:            "cluster.flotilla.io/unreachable",
		clusterv1beta1.TaintNotReady:               "cluster.flotilla.io/not-ready",
		clusterv1beta1.TaintCordoned:               "cluster.flotilla.io/cordoned",
		clusterv1beta1.LabelDrained:                "cluster.flotilla.io/drained",
		clusterv1beta1.PropertyNodeCount:           "flotilla.io/node-count",
		clusterv1beta1.PropertyKubernetesVersion:   "flotilla.io/kubernetes-version",
		clusterv1beta1.PropertyTotalCPU:            "resources.flotilla.io/total-cpu",
		clusterv1beta1.PropertyTotalMemory:         "resources.flotilla.io/total-memory",
		clusterv1beta1.PropertyAllocatableCPU:      "resources.flotilla.io/allocatable-cpu",
		clusterv1beta1.PropertyAllocatableMemory:   "resources.flotilla.io/allocatable-memory",
		clusterv1beta1.PropertyAvailableCPU:        "resources.flotilla.io/available-cpu",
		clusterv1beta1.PropertyAvailableMemory:     "resources.flotilla.io/available-memory",
		clusterv1beta1.HubNamespace:                "flotilla-system",
		clusterv1beta1.MemberNamespace("member-1"): "flotilla-member-member-1",
	}
	for got, want := range pinned {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
