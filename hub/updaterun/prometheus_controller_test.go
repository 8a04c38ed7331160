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

package updaterun_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/analysis"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// errorRatioBelow1Percent is a prometheus check over the stage's clusters'
// error ratio, as the docs show it.
var errorRatioBelow1Percent = placementv1beta1.AnalysisCheck{Name: "error-ratio", Prometheus: &placementv1beta1.PrometheusCheck{
	Query:            `max(flotilla_test_error_ratio{cluster=~"{{clusters}}"})`,
	SuccessCondition: "size(result) == 1 && result[0].value < 0.01",
}}

// promAnalysisTask is an Analysis task of the check, every second.
func promAnalysisTask(onFailure placementv1beta1.AnalysisFailurePolicy, successCount int32, check placementv1beta1.AnalysisCheck) placementv1beta1.AfterStageTask {
	return placementv1beta1.AfterStageTask{Type: placementv1beta1.AfterStageTaskTypeAnalysis, Analysis: &placementv1beta1.Analysis{
		Interval: metav1.Duration{Duration: time.Second}, SuccessCount: successCount, FailureLimit: 1, OnFailure: onFailure,
		Checks: []placementv1beta1.AnalysisCheck{check},
	}}
}

// errorRatioMetrics serves flotilla_test_error_ratio{cluster} from a registry
// of its own, and starts a real Prometheus that scrapes it.
func errorRatioMetrics(t *testing.T) (*prometheus.GaugeVec, analysis.Prometheus) {
	t.Helper()
	reg := prometheus.NewRegistry()
	ratio := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "flotilla_test_error_ratio", Help: "Share of failing requests, per cluster."}, []string{"cluster"})
	reg.MustRegister(ratio)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	url := testenv.StartPrometheus(t, strings.TrimPrefix(srv.URL, "http://"))
	prom, err := analysis.NewPrometheus(analysis.PrometheusOptions{URL: url, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return ratio, prom
}

// prometheusHas waits until Prometheus has scraped the value for the cluster.
func prometheusHas(t *testing.T, prom analysis.Prometheus, cluster string, value float64) {
	t.Helper()
	query := fmt.Sprintf("flotilla_test_error_ratio{cluster=%q}", cluster)
	testenv.Eventually(t, 60*time.Second, func() error {
		v, _, _, err := prom.Query(context.Background(), query, time.Now())
		if err != nil {
			return err
		}
		if vec, ok := v.(model.Vector); !ok || len(vec) != 1 || float64(vec[0].Value) != value {
			return fmt.Errorf("%s returned %v, want %g", query, v, value)
		}
		return nil
	})
}

// A PromQL analysis against a real Prometheus: the canary's error ratio is low
// (prod's high one does not count), so the analysis passes and the run
// finishes with no approval; then a canary cluster's ratio rises, the next
// run's analysis fails, and the run rolls the canary back by itself, prod never
// touched.
func TestCanaryFailingPromQLAnalysisIsRolledBack(t *testing.T) {
	ratio, prom := errorRatioMetrics(t)
	ratio.WithLabelValues("m-1").Set(0.001)
	ratio.WithLabelValues("m-2").Set(0.002)
	ratio.WithLabelValues("m-3").Set(0.9)
	prometheusHas(t, prom, "m-3", 0.9)

	startHubWithPrometheus(t, newMemberAgents(), prom)
	testenv.ReadyMember(t, env.Client, "m-1", map[string]string{"suite": "m", "stage": "canary"})
	testenv.ReadyMember(t, env.Client, "m-2", map[string]string{"suite": "m", "stage": "canary"})
	testenv.ReadyMember(t, env.Client, "m-3", map[string]string{"suite": "m", "stage": "prod"})
	appNamespace(t, "upd-m", "blue")
	externalPlacement(t, "upd-m", map[string]string{"suite": "m"})
	canaryAnalysisThenProd(t, "upd-m", promAnalysisTask(placementv1beta1.AnalysisFailureRollback, 2, errorRatioBelow1Percent))
	waitUntilExternallyControlled(t, "upd-m", "m-1", "m-2", "m-3")

	testenv.Create(t, env.Client, newRun("upd-m-0", "upd-m", "0", "upd-m"))
	waitForRunCondition(t, "upd-m-0", placementv1beta1.ConditionUpdateRunSucceeded, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunSucceeded)
	ts := analysisStatus(getRun(t, "upd-m-0"), "canary")
	if passed := conditions.Get(ts.Conditions, placementv1beta1.ConditionAnalysisPassed); passed == nil || passed.Status != metav1.ConditionTrue ||
		passed.Message != "passed after 2 rounds, 2 passing in a row, 0 failing" {
		t.Fatalf("canary analysis of run 0: %+v, condition %+v", ts.Analysis, passed)
	}
	testenv.Eventually(t, 30*time.Second, onSnapshot("upd-m", "upd-m-0-snapshot", "m-1", "m-2", "m-3"))

	// m-2's error ratio rises with the red version.
	ratio.WithLabelValues("m-2").Set(0.5)
	prometheusHas(t, prom, "m-2", 0.5)
	setColor(t, "upd-m", "red")
	testenv.Eventually(t, 30*time.Second, func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := env.Client.Get(context.Background(), types.NamespacedName{Name: "upd-m"}, crp); err != nil {
			return err
		}
		if crp.Status.ObservedResourceIndex != "1" {
			return fmt.Errorf("placement upd-m has resource index %q", crp.Status.ObservedResourceIndex)
		}
		return nil
	})
	testenv.Create(t, env.Client, newRun("upd-m-1", "upd-m", "1", "upd-m"))
	done := waitForRunCondition(t, "upd-m-1", placementv1beta1.ConditionUpdateRunSucceeded, metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunRolledBack)
	want := "the analysis of stage canary failed: failed after 1 round, 0 passing in a row, 1 failing: check error-ratio: size(result) == 1 && result[0].value < 0.01 is false: result: {} 0.5; 2 clusters rolled back to the resource snapshots they ran before the run"
	if done.Message != want {
		t.Errorf("Succeeded message =\n%q, want\n%q", done.Message, want)
	}
	testenv.Eventually(t, 30*time.Second, onSnapshot("upd-m", "upd-m-0-snapshot", "m-1", "m-2", "m-3"))
	if c := clusterStatus(getRun(t, "upd-m-1"), "m-3"); conditions.Get(c.Conditions, placementv1beta1.ConditionClusterUpdatingStarted) != nil {
		t.Errorf("prod cluster m-3 was started: %+v", c.Conditions)
	}
	if err := colorsAre("upd-m", map[string]string{"m-1": "blue", "m-2": "blue", "m-3": "blue"})(); err != nil {
		t.Error(err)
	}
	if err := hasEvent("upd-m-1", placementv1beta1.ReasonAnalysisFailed); err != nil {
		t.Error(err)
	}
}

// A prometheus check on a hub with no Prometheus fails its round, and with
// onFailure Pause stops the run, saying which flag to set.
func TestAPromQLAnalysisWithNoPrometheusPausesTheRunNamingTheFlag(t *testing.T) {
	startHub(t, newMemberAgents())
	testenv.ReadyMember(t, env.Client, "n-1", map[string]string{"suite": "n", "stage": "canary"})
	testenv.ReadyMember(t, env.Client, "n-2", map[string]string{"suite": "n", "stage": "prod"})
	appNamespace(t, "upd-n", "blue")
	externalPlacement(t, "upd-n", map[string]string{"suite": "n"})
	canaryAnalysisThenProd(t, "upd-n", promAnalysisTask(placementv1beta1.AnalysisFailurePause, 1, errorRatioBelow1Percent))
	waitUntilExternallyControlled(t, "upd-n", "n-1", "n-2")

	testenv.Create(t, env.Client, newRun("upd-n-0", "upd-n", "0", "upd-n"))
	paused := waitForRunCondition(t, "upd-n-0", placementv1beta1.ConditionUpdateRunProgressing, metav1.ConditionFalse, placementv1beta1.ReasonUpdateRunAnalysisPaused)
	want := "stage canary: the analysis failed, so no further stage starts (onFailure Pause): failed after 1 round, 0 passing in a row, 1 failing: check error-ratio: no Prometheus is configured: start the hub with --prometheus-url"
	if paused.Message != want {
		t.Errorf("Progressing message =\n%q, want\n%q", paused.Message, want)
	}
	if err := colorsAre("upd-n", map[string]string{"n-1": "blue", "n-2": ""})(); err != nil {
		t.Error(err)
	}
}
