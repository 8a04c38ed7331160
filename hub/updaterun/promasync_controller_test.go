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
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/analysis"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// slowPrometheus answers instant queries with one series at 0, but only when
// released (or after 9s, under the hub's 10s timeout); held says whether a
// query is waiting now, asked whether one ever arrived.
type slowPrometheus struct {
	release     chan struct{}
	held, asked atomic.Bool
}

func (p *slowPrometheus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.asked.Store(true)
	p.held.Store(true)
	select {
	case <-p.release:
	case <-time.After(9 * time.Second):
	case <-r.Context().Done():
	}
	p.held.Store(false)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[%d,"0"]}]}}`, time.Now().Unix())
}

// A Prometheus that takes seconds to answer does not hold the update-run
// worker (one, as by default): while one run's analysis round waits for its
// query, another run is initialized, moves its cluster and succeeds; then the
// answer comes, and the first run's round is judged and passes.
func TestASlowPrometheusDoesNotHoldAnotherRun(t *testing.T) {
	slow := &slowPrometheus{release: make(chan struct{})}
	srv := httptest.NewServer(slow)
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		select {
		case <-slow.release:
		default:
			close(slow.release)
		}
	})
	prom, err := analysis.NewPrometheus(analysis.PrometheusOptions{URL: srv.URL, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	startHubWithPrometheus(t, newMemberAgents(), prom)
	testenv.ReadyMember(t, env.Client, "sa-1", map[string]string{"suite": "sa", "stage": "canary"})
	testenv.ReadyMember(t, env.Client, "sa-2", map[string]string{"suite": "sa", "stage": "prod"})
	testenv.ReadyMember(t, env.Client, "sb-1", map[string]string{"suite": "sb", "stage": "prod"})
	appNamespace(t, "upd-sa", "blue")
	appNamespace(t, "upd-sb", "green")
	externalPlacement(t, "upd-sa", map[string]string{"suite": "sa"})
	externalPlacement(t, "upd-sb", map[string]string{"suite": "sb"})
	canaryAnalysisThenProd(t, "upd-sa", promAnalysisTask(placementv1beta1.AnalysisFailurePause, 1, placementv1beta1.AnalysisCheck{
		Name: "errors", Prometheus: &placementv1beta1.PrometheusCheck{Query: `max(errors{cluster=~"{{clusters}}"})`, SuccessCondition: "size(result) == 1 && result[0].value == 0.0"},
	}))
	testenv.Create(t, env.Client, &placementv1beta1.ClusterStagedUpdateStrategy{
		ObjectMeta: metav1.ObjectMeta{Name: "upd-sb"},
		Spec: placementv1beta1.StagedUpdateStrategySpec{Stages: []placementv1beta1.StageConfig{
			{Name: "all", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"suite": "sb"}}},
		}},
	})
	waitUntilExternallyControlled(t, "upd-sa", "sa-1", "sa-2")
	waitUntilExternallyControlled(t, "upd-sb", "sb-1")

	// Run A's canary round asks the slow Prometheus, which holds the query.
	testenv.Create(t, env.Client, newRun("upd-sa-0", "upd-sa", "0", "upd-sa"))
	testenv.Eventually(t, 30*time.Second, func() error {
		if !slow.held.Load() {
			return fmt.Errorf("run upd-sa-0's round has not queried Prometheus yet")
		}
		return nil
	})
	// Run B goes from creation to success while A's query is held.
	start := time.Now()
	testenv.Create(t, env.Client, newRun("upd-sb-0", "upd-sb", "0", "upd-sb"))
	testenv.Eventually(t, 6*time.Second, func() error {
		if !slow.held.Load() {
			t.Fatalf("run upd-sa-0's query was answered before run upd-sb-0 succeeded")
		}
		run := getRun(t, "upd-sb-0")
		if c := conditions.Get(run.Status.Conditions, placementv1beta1.ConditionUpdateRunSucceeded); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("run upd-sb-0: Succeeded is %+v", c)
		}
		return nil
	})
	t.Logf("run upd-sb-0 succeeded %s after it was created, while run upd-sa-0's query was held", time.Since(start).Round(time.Millisecond))
	if err := colorsAre("upd-sb", map[string]string{"sb-1": "green"})(); err != nil {
		t.Error(err)
	}
	// Meanwhile A's analysis says what it waits for.
	testenv.Eventually(t, 2*time.Second, func() error {
		ts := analysisStatus(getRun(t, "upd-sa-0"), "canary")
		if ts == nil {
			return fmt.Errorf("run upd-sa-0 has no canary analysis status yet")
		}
		c := conditions.Get(ts.Conditions, placementv1beta1.ConditionAnalysisPassed)
		if c == nil || c.Status != metav1.ConditionUnknown || c.Message != "round 1 is waiting for Prometheus" {
			return fmt.Errorf("run upd-sa-0's canary analysis: %+v", c)
		}
		return nil
	})

	// The answer comes: A's round is judged and passes, and A goes on.
	close(slow.release)
	waitForRunCondition(t, "upd-sa-0", placementv1beta1.ConditionUpdateRunSucceeded, metav1.ConditionTrue, placementv1beta1.ReasonUpdateRunSucceeded)
	ts := analysisStatus(getRun(t, "upd-sa-0"), "canary")
	if c := conditions.Get(ts.Conditions, placementv1beta1.ConditionAnalysisPassed); c == nil || c.Message != "passed after 1 round, 1 passing in a row, 0 failing" {
		t.Errorf("run upd-sa-0's canary analysis: %+v", c)
	}
}
