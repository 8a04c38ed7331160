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
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// PlacementConditionsTrue returns a check that the placement is current and
// every placement-level condition is True, with exactly the given clusters.
func PlacementConditionsTrue(ctx context.Context, hub client.Client, name string, clusters ...string) func() error {
	return func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Name: name}, crp); err != nil {
			return err
		}
		for _, perCluster := range placementv1beta1.PerClusterConditionTypes() {
			t := placementv1beta1.ClusterResourcePlacementConditionType(perCluster)
			c := findCondition(crp.Status.Conditions, t)
			if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != crp.Generation {
				return fmt.Errorf("placement %s: %s is %s", name, t, describe(c))
			}
		}
		var got []string
		for _, pcs := range crp.Status.PlacementStatuses {
			got = append(got, pcs.ClusterName)
			for _, perCluster := range placementv1beta1.PerClusterConditionTypes() {
				c := findCondition(pcs.Conditions, perCluster)
				if c == nil || c.Status != metav1.ConditionTrue {
					return fmt.Errorf("placement %s on %s: %s is %s", name, pcs.ClusterName, perCluster, describe(c))
				}
			}
		}
		if strings.Join(got, ",") != strings.Join(clusters, ",") {
			return fmt.Errorf("placement %s is on [%s], want [%s]", name, strings.Join(got, ","), strings.Join(clusters, ","))
		}
		return nil
	}
}

// MemberConditionTrue returns a check that a MemberCluster's condition is True
// (want true) or not True (want false).
func MemberCondition(ctx context.Context, hub client.Client, member, condType string, want metav1.ConditionStatus) func() error {
	return func() error {
		mc := &clusterv1beta1.MemberCluster{}
		if err := hub.Get(ctx, types.NamespacedName{Name: member}, mc); err != nil {
			return err
		}
		c := findCondition(mc.Status.Conditions, condType)
		if c == nil || c.Status != want {
			return fmt.Errorf("member %s: %s is %s, want %s", member, condType, describe(c), want)
		}
		return nil
	}
}

func findCondition(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

func describe(c *metav1.Condition) string {
	if c == nil {
		return "missing"
	}
	return fmt.Sprintf("%s (%s: %s)", c.Status, c.Reason, c.Message)
}
