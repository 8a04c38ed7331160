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

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// A rolling update (maxUnavailable 1: one member per wave) whose second wave
// fails its analysis returns the first wave: a label says which members are
// held to at most 3 replicas, the agents report the ConfigMap's replicas as
// statusFeedback; member-1 is not and passes, member-2 is and fails, and both go back to the
// old ConfigMap by themselves while member-3, never moved, is not touched.
func TestARollingUpdateWhoseSecondWaveFailsItsAnalysisReturnsTheFirstWave(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	const (
		ns        = "wave-analysed"
		placement = "wave-analysed"
	)
	labelMembers(t, hub, "strict-replicas", map[string]string{"member-1": "false", "member-2": "true", "member-3": "true"})

	createApp(t, hub, ns, map[string]string{"color": "blue", "replicas": "2"})
	crp := appPlacement(ns, placementv1beta1.RollingUpdateRolloutStrategyType)
	crp.Spec.StatusFeedback = []placementv1beta1.StatusFeedbackRule{{Version: "v1", Kind: "ConfigMap",
		JSONPaths: []placementv1beta1.JSONPathRule{{Name: "replicas", Path: ".data.replicas"}}}}
	crp.Spec.Strategy.RollingUpdate = &placementv1beta1.RollingUpdateConfig{
		MaxUnavailable: ptr.To(intstr.FromInt32(1)), MaxSurge: ptr.To(intstr.FromInt32(0)), UnavailablePeriodSeconds: ptr.To[int32](1),
		Analysis: &placementv1beta1.Analysis{
			Interval: metav1.Duration{Duration: 2 * time.Second}, SuccessCount: 2, FailureLimit: 1,
			OnFailure: placementv1beta1.AnalysisFailureRollback,
			Checks: []placementv1beta1.AnalysisCheck{{
				Name: "replicas-within-limit",
				CEL:  "clusters.all(c, c.labels['strict-replicas'] != 'true' || c.feedback.all(f, f.kind != 'ConfigMap' || f.values.all(v, v.name != 'replicas' || int(v.value) <= 3)))",
			}},
		},
	}
	createPlacement(t, hub, crp)
	// Index 0 (replicas 2) is within every limit: its one wave (every member
	// at once, nothing was there) passes.
	framework.Eventually(t, 3*time.Minute, colorIn(t, ns, "blue", allMembers...))
	analysisCondition := func() (*metav1.Condition, *placementv1beta1.RolloutAnalysisStatus, error) {
		got := &placementv1beta1.ClusterResourcePlacement{}
		if err := hub.Get(ctx, types.NamespacedName{Name: placement}, got); err != nil {
			return nil, nil, err
		}
		return conditions.Get(got.Status.Conditions, "ClusterResourcePlacement"+placementv1beta1.ConditionRolloutAnalysis), got.Status.RolloutAnalysis, nil
	}
	framework.Eventually(t, 2*time.Minute, func() error {
		c, _, err := analysisCondition()
		if err != nil {
			return err
		}
		if c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("RolloutAnalysis is %+v, want True", c)
		}
		return nil
	})

	// Index 1 (replicas 5): wave 1 (member-1, not strict) passes, wave 2
	// (member-2, strict: at most 3) fails.
	cm := &corev1.ConfigMap{}
	if err := hub.Get(ctx, types.NamespacedName{Namespace: ns, Name: "settings"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["color"], cm.Data["replicas"] = "red", "5"
	if err := hub.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	untouched := func() error {
		if err := colorIn(t, ns, "blue", "member-3")(); err != nil {
			return fmt.Errorf("member-3, which the rollout never moved, was touched: %w", err)
		}
		return nil
	}
	framework.Eventually(t, 2*time.Minute, func() error {
		if err := untouched(); err != nil {
			t.Fatal(err)
		}
		return colorIn(t, ns, "red", "member-1", "member-2")()
	})
	var failedAt time.Time
	framework.Eventually(t, 2*time.Minute, func() error {
		c, st, err := analysisCondition()
		if err != nil {
			return err
		}
		if c == nil || (c.Reason != placementv1beta1.ReasonWaveRollingBack && c.Reason != placementv1beta1.ReasonWaveRolledBack) {
			return fmt.Errorf("RolloutAnalysis is %+v, want the second wave failed", c)
		}
		failedAt = time.Now()
		framework.Logf("wave %d failed its analysis: %s (status %+v)", st.Wave, c.Message, st.Analysis)
		if st.Wave != 2 || !strings.Contains(st.Analysis.LastFailure, "member-2") {
			t.Errorf("the failed wave is %d (%v), last failure %q; want wave 2 failing on member-2", st.Wave, st.Clusters, st.Analysis.LastFailure)
		}
		return nil
	})
	framework.Eventually(t, 2*time.Minute, func() error {
		if err := untouched(); err != nil {
			t.Fatal(err)
		}
		return colorIn(t, ns, "blue", "member-1", "member-2")()
	})
	framework.Logf("rollback time: members 1 and 2 hold the old ConfigMap again %s after the test saw wave 2 fail", time.Since(failedAt).Round(time.Millisecond))
	framework.Eventually(t, time.Minute, func() error {
		c, _, err := analysisCondition()
		if err != nil {
			return err
		}
		if c == nil || c.Reason != placementv1beta1.ReasonWaveRolledBack {
			return fmt.Errorf("RolloutAnalysis is %+v, want %s", c, placementv1beta1.ReasonWaveRolledBack)
		}
		return nil
	})
	snap := &placementv1beta1.ClusterResourceSnapshot{}
	if err := hub.Get(ctx, types.NamespacedName{Name: placement + "-1-snapshot"}, snap); err != nil {
		t.Fatal(err)
	}
	if mark := snap.Annotations[placementv1beta1.AnnotationFailedAnalysis]; !strings.Contains(mark, "replicas-within-limit") {
		t.Errorf("resource snapshot %s is marked %s=%q, want the failing check named", snap.Name, placementv1beta1.AnnotationFailedAnalysis, mark)
	}
	// The failed snapshot is not rolled out again.
	framework.Consistently(t, 5*time.Second, colorIn(t, ns, "blue", allMembers...))
}
