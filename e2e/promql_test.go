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

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/tools/localfleet/fleet"
)

// noDriftQuery is the PromQL gate of promql_test.go: the drifts the agents of
// the stage's clusters corrected in the last 20s, per cluster. The fleet's
// Prometheus labels each agent's series with cluster=<member>.
const noDriftQuery = `sum by (cluster) (increase(flotilla_agent_drifts_total{job="` + fleet.PrometheusAgentJob +
	`", outcome="corrected", cluster=~"{{clusters}}"}[20s]))`

// A staged run whose canary stage has a PromQL analysis, against the fleet's
// real Prometheus scraping the real agents: while nothing fights the canary's
// objects, the agent reports no corrected drift and the run finishes with no
// approval; when something on the canary keeps changing the new version's
// ConfigMap, the canary's agent corrects it, its flotilla_agent_drifts_total
// rises, the check fails, and the canary is rolled back while prod is never
// touched.
func TestStagedUpdateRunPromQLGate(t *testing.T) {
	promURL := fleetPrometheus(t)
	ctx := context.Background()
	hub := hubClient(t)
	const (
		ns        = "promql-app"
		placement = "promql-app"
		strategy  = "promql-canary-then-prod"
	)
	canary, prod := labelStages(t, hub)

	// Prometheus has scraped the canary's agent long enough for the gate's
	// query to answer, and it corrected no drift lately.
	prom := prometheusAPI(t, promURL)
	framework.Eventually(t, time.Minute, func() error {
		query := strings.ReplaceAll(noDriftQuery, "{{clusters}}", "member-1")
		v, err := querySeries(ctx, prom, query)
		if err == nil && v != 0 {
			err = fmt.Errorf("query %s returned %g, want 0", query, v)
		}
		return err
	})

	createApp(t, hub, ns, map[string]string{"color": "blue"})
	const interval, successCount = 2 * time.Second, 5
	createOnHub(t, hub, canaryThenProd(strategy, nil, placementv1beta1.AfterStageTask{Type: placementv1beta1.AfterStageTaskTypeAnalysis, Analysis: &placementv1beta1.Analysis{
		Interval: metav1.Duration{Duration: interval}, SuccessCount: successCount, FailureLimit: 1,
		OnFailure: placementv1beta1.AnalysisFailureRollback,
		Checks: []placementv1beta1.AnalysisCheck{{
			Name: "no-drift-corrected",
			Prometheus: &placementv1beta1.PrometheusCheck{
				Query: noDriftQuery,
				// One series per canary cluster, each at 0: a canary
				// Prometheus does not scrape does not pass.
				SuccessCondition: "size(result) == 1 && result.all(s, s.value == 0.0)",
			},
		}},
	}}))
	createPlacement(t, hub, appPlacement(ns, placementv1beta1.ExternalRolloutStrategyType))
	framework.Eventually(t, time.Minute, scheduledBindings(ctx, hub, placement, allMembers...))
	framework.Eventually(t, time.Minute, resourceIndexExists(ctx, hub, placement, "0"))

	getRun := func(name string) (*placementv1beta1.ClusterStagedUpdateRun, error) {
		run := &placementv1beta1.ClusterStagedUpdateRun{}
		return run, hub.Get(ctx, types.NamespacedName{Name: name}, run)
	}
	analysisOf := func(run *placementv1beta1.ClusterStagedUpdateRun) *placementv1beta1.AfterStageTaskStatus {
		if len(run.Status.StagesStatus) == 0 {
			return nil // not initialized yet
		}
		for i, ts := range run.Status.StagesStatus[0].AfterStageTaskStatus {
			if ts.Type == placementv1beta1.AfterStageTaskTypeAnalysis {
				return &run.Status.StagesStatus[0].AfterStageTaskStatus[i]
			}
		}
		return nil
	}

	// Index 0: no drift on the canary, the gate passes successCount rounds in a
	// row and the run goes on to prod with no approval.
	start := time.Now()
	createOnHub(t, hub, &placementv1beta1.ClusterStagedUpdateRun{
		ObjectMeta: metav1.ObjectMeta{Name: "promql-run-0"},
		Spec:       placementv1beta1.StagedUpdateRunSpec{PlacementName: placement, ResourceSnapshotIndex: "0", StagedUpdateStrategyName: strategy},
	})
	framework.Eventually(t, 3*time.Minute, func() error {
		run, err := getRun("promql-run-0")
		if err != nil {
			return err
		}
		if c := conditions.Get(run.Status.Conditions, placementv1beta1.ConditionUpdateRunSucceeded); c == nil || c.Status != metav1.ConditionTrue {
			if ts := analysisOf(run); ts != nil && ts.Analysis != nil && ts.Analysis.Failures > 0 {
				t.Fatalf("the canary's PromQL gate failed a round of a run with no drift: %s", ts.Analysis.LastFailure)
			}
			return fmt.Errorf("run promql-run-0: Succeeded is %+v", c)
		}
		return nil
	})
	framework.Eventually(t, time.Minute, colorIn(t, ns, "blue", allMembers...))
	run0, err := getRun("promql-run-0")
	if err != nil {
		t.Fatal(err)
	}
	ts := analysisOf(run0)
	if ts == nil || ts.Analysis == nil || ts.Analysis.Rounds < successCount || ts.Analysis.Failures != 0 ||
		!conditions.IsTrue(ts.Conditions, placementv1beta1.ConditionAnalysisPassed) {
		t.Fatalf("run promql-run-0's canary analysis is %+v, want passed after %d rounds with no failure", ts, successCount)
	}
	if _, err := approvalRequestOf(ctx, hub, "promql-run-0", "canary"); err == nil {
		t.Errorf("run promql-run-0 asked for an approval; its analysis alone should let it through")
	}
	framework.Logf("run promql-run-0 passed %d PromQL rounds (every %s) on the canary and succeeded with no approval after %s",
		ts.Analysis.Rounds, interval, time.Since(start).Round(time.Millisecond))
	// The hub was scraped too: its queries to Prometheus show in Prometheus.
	framework.Eventually(t, 30*time.Second, func() error {
		v, err := querySeries(ctx, prom, `sum(flotilla_updaterun_prometheus_queries_total{job="`+fleet.PrometheusHubJob+`", result="ok"})`)
		if err != nil {
			return err
		}
		if v < successCount {
			return fmt.Errorf("the hub's flotilla_updaterun_prometheus_queries_total{result=\"ok\"} is %g in Prometheus, want at least %d", v, successCount)
		}
		return nil
	})

	// Index 1 reaches the canary, where something keeps changing its
	// ConfigMap: the agent corrects each change, and the gate fails.
	cm := &corev1.ConfigMap{}
	if err := hub.Get(ctx, types.NamespacedName{Namespace: ns, Name: "settings"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["color"] = "red"
	if err := hub.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, resourceIndexExists(ctx, hub, placement, "1"))
	createOnHub(t, hub, &placementv1beta1.ClusterStagedUpdateRun{
		ObjectMeta: metav1.ObjectMeta{Name: "promql-run-1"},
		Spec:       placementv1beta1.StagedUpdateRunSpec{PlacementName: placement, ResourceSnapshotIndex: "1", StagedUpdateStrategyName: strategy},
	})
	prodBlue := func() {
		t.Helper()
		if err := colorIn(t, ns, "blue", prod...)(); err != nil {
			t.Fatalf("prod was touched: %v", err)
		}
	}
	framework.Eventually(t, 2*time.Minute, func() error {
		prodBlue()
		return colorIn(t, ns, "red", canary...)()
	})
	framework.Logf("the canary holds index 1; changing its ConfigMap on the member about once a second")
	var tampered int
	var lastTamper time.Time
	var failedRound time.Time
	var sawFailed time.Time
	framework.Eventually(t, 2*time.Minute, func() error {
		prodBlue()
		run, err := getRun("promql-run-1")
		if err != nil {
			return err
		}
		if ts := analysisOf(run); ts != nil && ts.Analysis != nil {
			if c := conditions.Get(ts.Conditions, placementv1beta1.ConditionAnalysisPassed); c != nil && c.Status == metav1.ConditionFalse && c.Reason == placementv1beta1.ReasonAnalysisFailed {
				sawFailed = time.Now()
				if ts.Analysis.LastRoundTime != nil {
					failedRound = ts.Analysis.LastRoundTime.Time
				}
				if !strings.Contains(c.Message, "no-drift-corrected") || !strings.Contains(c.Message, `cluster="member-1"`) {
					t.Errorf("the failed analysis says %q; want the check's name and the canary's series", c.Message)
				}
				framework.Logf("canary PromQL gate failed after %d rounds: %s", ts.Analysis.Rounds, c.Message)
				return nil
			}
			if c := conditions.Get(ts.Conditions, placementv1beta1.ConditionAnalysisPassed); c != nil && c.Status == metav1.ConditionTrue {
				t.Fatalf("the canary's PromQL gate passed while its ConfigMap was being changed %d times: %s", tampered, c.Message)
			}
		}
		if time.Since(lastTamper) >= time.Second && tamper(ctx, memberClient(t, canary[0]), ns, "red", "tampered") == nil {
			tampered++
			lastTamper = time.Now()
		}
		return fmt.Errorf("the canary analysis of promql-run-1 has not failed yet (%d changes made on the canary)", tampered)
	})
	framework.Eventually(t, 2*time.Minute, func() error {
		prodBlue()
		return colorIn(t, ns, "blue", canary...)()
	})
	back := time.Now()
	framework.Logf("rollback time: the canary holds index 0 again %s after the failing round ran (round time, second precision) and %s after the test saw the analysis fail",
		back.Sub(failedRound).Round(time.Millisecond), back.Sub(sawFailed).Round(time.Millisecond))
	framework.Eventually(t, time.Minute, func() error {
		run, err := getRun("promql-run-1")
		if err != nil {
			return err
		}
		c := conditions.Get(run.Status.Conditions, placementv1beta1.ConditionUpdateRunSucceeded)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != placementv1beta1.ReasonUpdateRunRolledBack {
			return fmt.Errorf("run promql-run-1: Succeeded is %+v, want False %s", c, placementv1beta1.ReasonUpdateRunRolledBack)
		}
		return nil
	})
	framework.Consistently(t, 5*time.Second, func() error { prodBlue(); return nil })
}

// tamper changes the color of the namespace's settings ConfigMap on a member
// from one to another, as something on the member fighting Flotilla would; it
// does nothing when the ConfigMap does not hold from (an error says why).
func tamper(ctx context.Context, member client.Client, ns, from, to string) error {
	cm := &corev1.ConfigMap{}
	if err := member.Get(ctx, types.NamespacedName{Namespace: ns, Name: "settings"}, cm); err != nil {
		return err
	}
	if cm.Data["color"] != from {
		return fmt.Errorf("the ConfigMap holds %q, not %q", cm.Data["color"], from)
	}
	cm.Data["color"] = to
	return member.Update(ctx, cm)
}

// fleetPrometheus returns the URL of the fleet's Prometheus, which the hub
// was started with (--prometheus-url), or skips the test when the fleet runs
// none: on kind, or without prometheus on PATH (make prometheus).
func fleetPrometheus(t *testing.T) string {
	t.Helper()
	url, err := provider.PrometheusURL()
	if err != nil {
		t.Fatal(err)
	}
	if url == "" {
		t.Skip("the fleet runs no Prometheus (kind fleets never do; on kwok, make prometheus installs it): the PromQL gate is not tested")
	}
	return url
}

func prometheusAPI(t *testing.T, url string) promv1.API {
	t.Helper()
	c, err := promapi.NewClient(promapi.Config{Address: url})
	if err != nil {
		t.Fatal(err)
	}
	return promv1.NewAPI(c)
}

// querySeries runs an instant query that must return exactly one series, and
// returns its value.
func querySeries(ctx context.Context, prom promv1.API, query string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v, _, _, err := prom.Query(ctx, query, time.Now())
	if err != nil {
		return 0, fmt.Errorf("query %s: %w", query, err)
	}
	vec, ok := v.(model.Vector)
	if !ok || len(vec) != 1 {
		return 0, fmt.Errorf("query %s returned %v, want one series", query, v)
	}
	return float64(vec[0].Value), nil
}
