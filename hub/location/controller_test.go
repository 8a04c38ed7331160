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

package location

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
)

func member(name string, labels map[string]string, ready bool) clusterv1beta1.MemberCluster {
	mc := clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	status := metav1.ConditionFalse
	if ready {
		status = metav1.ConditionTrue
	}
	for _, t := range []string{clusterv1beta1.ConditionJoined, clusterv1beta1.ConditionAgentConnected, clusterv1beta1.ConditionHealthy} {
		mc.Status.Conditions = append(mc.Status.Conditions, metav1.Condition{Type: t, Status: status})
	}
	return mc
}

func TestCount(t *testing.T) {
	clusters := []clusterv1beta1.MemberCluster{
		member("a", map[string]string{"cloud": "aws"}, true),
		member("b", map[string]string{"cloud": "aws"}, false),
		member("c", map[string]string{"cloud": "gcp"}, true),
	}
	for _, tc := range []struct {
		name                     string
		selector                 metav1.LabelSelector
		wantInstances, wantAvail int32
		wantErr                  bool
	}{
		{"counts the selected clusters and the ready ones among them", metav1.LabelSelector{MatchLabels: map[string]string{"cloud": "aws"}}, 2, 1, false},
		{"an empty selector selects every cluster", metav1.LabelSelector{}, 3, 2, false},
		{"a selector matching nothing counts nothing", metav1.LabelSelector{MatchLabels: map[string]string{"cloud": "azure"}}, 0, 0, false},
		{"an invalid selector is an error", metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "cloud", Operator: "Bogus"}}}, 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loc := &clusterv1beta1.Location{Spec: clusterv1beta1.LocationSpec{InstanceSelector: tc.selector}}
			n, avail, err := Count(loc, clusters)
			if (err != nil) != tc.wantErr || n != tc.wantInstances || avail != tc.wantAvail {
				t.Errorf("Count = (%d, %d, %v), want (%d, %d, err=%v)", n, avail, err, tc.wantInstances, tc.wantAvail, tc.wantErr)
			}
		})
	}
}
