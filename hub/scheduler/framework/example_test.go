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

package framework_test

import (
	"context"
	"fmt"
	"math/rand"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins"
)

func Example() {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cluster := func(name, env string) clusterv1beta1.MemberCluster {
		since := metav1.NewTime(now.Add(-time.Hour))
		return clusterv1beta1.MemberCluster{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"env": env}},
			Status: clusterv1beta1.MemberClusterStatus{Conditions: []metav1.Condition{
				{Type: clusterv1beta1.ConditionJoined, Status: metav1.ConditionTrue, LastTransitionTime: since},
				{Type: clusterv1beta1.ConditionAgentConnected, Status: metav1.ConditionTrue, LastTransitionTime: since},
			}},
		}
	}
	two := int32(2)
	fw := plugins.NewFramework(framework.Options{})
	res, err := fw.RunCycle(context.Background(), framework.CycleInput{
		PlacementName: "web",
		Policy: &placementv1beta1.PlacementPolicy{
			PlacementType:    placementv1beta1.PickN,
			NumberOfClusters: &two,
			Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{
					ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{
						LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
					}},
				},
			}},
		},
		Clusters: []clusterv1beta1.MemberCluster{cluster("member-1", "prod"), cluster("member-2", "dev"), cluster("member-3", "prod")},
		Now:      now,
		Rand:     rand.New(rand.NewSource(1)),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Selected)
	fmt.Println(res.Reason+":", res.Message)
	for _, d := range res.Decisions {
		fmt.Printf("%s selected=%v: %s\n", d.ClusterName, d.Selected, d.Reason)
	}
	// Output:
	// [member-1 member-3]
	// SchedulingPolicyFulfilled: 2 of 2 clusters selected; member-2: cluster labels do not match the required selector env=prod
	// member-1 selected=true: picked: among the best-scoring clusters that match the scheduling policy
	// member-3 selected=true: picked: among the best-scoring clusters that match the scheduling policy
	// member-2 selected=false: cluster labels do not match the required selector env=prod
}
