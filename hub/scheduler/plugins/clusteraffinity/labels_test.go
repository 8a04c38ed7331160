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

package clusteraffinity

import (
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

func TestALabelMatcherMatchesAsItsSelector(t *testing.T) {
	clusters := []clusterv1beta1.MemberCluster{
		clusterWithLabels("a", "env", "prod", "zone", "1"),
		clusterWithLabels("b", "env", "dev", "zone", "1", "size", "10"),
		clusterWithLabels("c", "env", "prod", "zone", "2", "size", "3"),
		clusterWithLabels("d", "zone", "2"),
		clusterWithLabels("e", "env", "prod", clusterv1beta1.LabelClusterName, "not-e"),
	}
	members := make([]*clusterv1beta1.MemberCluster, len(clusters))
	infos := make([]*framework.ClusterInfo, len(clusters))
	for i := range clusters {
		members[i] = &clusters[i]
		infos[i] = &framework.ClusterInfo{Index: i, Name: clusters[i].Name, Cluster: &clusters[i]}
	}
	fleet := framework.NewFleet(1, members)
	tests := []struct {
		name     string
		selector string
	}{
		{"everything", ""},
		{"equality", "env=prod"},
		{"double equality", "env==prod"},
		{"inequality, true without the key", "env!=prod"},
		{"in", "zone in (1,3)"},
		{"not in, true without the key", "env notin (dev)"},
		{"exists", "size"},
		{"does not exist", "!size"},
		{"greater than", "size>5"},
		{"less than", "size<5"},
		{"several requirements", "env=prod,zone=2"},
		{"the built-in name label, whatever the cluster's own label says", clusterv1beta1.LabelClusterName + " in (a,e)"},
		{"the built-in name label, negated", clusterv1beta1.LabelClusterName + "!=e"},
		{"a key no cluster has", "rack=r1"},
		{"a key no cluster has, negated", "!rack"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := labels.Parse(tt.selector)
			if err != nil {
				t.Fatalf("labels.Parse(%q) = %v", tt.selector, err)
			}
			m := newLabelMatcher(sel, fleet)
			// Twice: the second time from the verdicts worked out the first.
			for range 2 {
				for _, c := range infos {
					if got, want := m.matches(sel, c), sel.Matches(c.Labels()); got != want {
						t.Errorf("matches(%q, %s) = %v, want %v", tt.selector, c.Name, got, want)
					}
				}
			}
		})
	}
	if m := newLabelMatcher(labels.Nothing(), fleet); m.matches(labels.Nothing(), infos[0]) {
		t.Errorf("a matcher of labels.Nothing() matches %s", infos[0].Name)
	}
	var none *labelMatcher
	if sel := labels.SelectorFromSet(labels.Set{"env": "dev"}); !none.matches(sel, infos[1]) || none.matches(sel, infos[0]) {
		t.Errorf("without a matcher, matches does not ask the selector")
	}
}
