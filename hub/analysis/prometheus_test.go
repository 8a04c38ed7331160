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

package analysis

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/poll"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

func TestExpandClusters(t *testing.T) {
	tests := []struct {
		name     string
		query    string
		clusters []string
		want     string
	}{
		{
			name:     "a query without the placeholder is left as it is",
			query:    `max(up)`,
			clusters: []string{"a-1"},
			want:     `max(up)`,
		},
		{
			name:     "the placeholder becomes the clusters' names, sorted, as alternatives",
			query:    `max(errors{cluster=~"{{clusters}}"})`,
			clusters: []string{"b-2", "a-1"},
			want:     `max(errors{cluster=~"a-1|b-2"})`,
		},
		{
			name:     "a dot in a name is escaped for the regular expression and again for the string",
			query:    `errors{cluster=~"{{clusters}}"}`,
			clusters: []string{"eu.west-1"},
			want:     `errors{cluster=~"eu\\.west-1"}`,
		},
		{
			name:     "every placeholder is expanded",
			query:    `a{c=~"{{clusters}}"} / b{c=~"{{clusters}}"}`,
			clusters: []string{"x"},
			want:     `a{c=~"x"} / b{c=~"x"}`,
		},
		{
			name:  "no clusters is a regular expression that matches nothing",
			query: `errors{cluster=~"{{clusters}}"}`,
			want:  `errors{cluster=~"\\b\\B"}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, expandClusters(tc.query, tc.clusters)); diff != "" {
				t.Errorf("expandClusters (-want +got):\n%s", diff)
			}
		})
	}
}

// The expanded regular expression, read back from its PromQL string and
// anchored as PromQL anchors it, matches the stage's clusters and nothing else.
func TestTheClustersRegularExpressionMatchesExactlyTheClusters(t *testing.T) {
	for _, tc := range []struct {
		name         string
		clusters     []string
		alsoNotMatch []string
	}{
		{name: "names with dots and dashes", clusters: []string{"eu.west-1", "us-east-2"}, alsoNotMatch: []string{"euxwest-1", "eu.west-12", "us-east", ""}},
		{name: "no clusters", clusters: nil, alsoNotMatch: []string{"", "a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			expanded := expandClusters(placementv1beta1.PrometheusClustersPlaceholder, tc.clusters)
			re := regexp.MustCompile("^(?:" + strings.ReplaceAll(expanded, `\\`, `\`) + ")$")
			for _, c := range tc.clusters {
				if !re.MatchString(c) {
					t.Errorf("%s does not match %q", re, c)
				}
			}
			for _, c := range tc.alsoNotMatch {
				if re.MatchString(c) {
					t.Errorf("%s matches %q", re, c)
				}
			}
		})
	}
}

func series(value float64, labels ...string) *model.Sample {
	m := model.Metric{}
	for i := 0; i+1 < len(labels); i += 2 {
		m[model.LabelName(labels[i])] = model.LabelValue(labels[i+1])
	}
	return &model.Sample{Metric: m, Value: model.SampleValue(value)}
}

func TestResultInput(t *testing.T) {
	many := make(model.Vector, maxPrometheusSeries+1)
	for i := range many {
		many[i] = series(1, "cluster", fmt.Sprintf("c-%d", i))
	}
	tests := []struct {
		name    string
		value   model.Value
		want    any
		wantErr string
	}{
		{
			name:  "a scalar is a double",
			value: &model.Scalar{Value: 0.25},
			want:  0.25,
		},
		{
			name:  "a vector is a list of series with their labels and values",
			value: model.Vector{series(0.5, "cluster", "a-1", "job", "web"), series(2)},
			want: []any{
				map[string]any{"metric": map[string]any{"cluster": "a-1", "job": "web"}, "value": 0.5},
				map[string]any{"metric": map[string]any{}, "value": 2.0},
			},
		},
		{
			name:  "an empty vector is an empty list",
			value: model.Vector{},
			want:  []any{},
		},
		{
			name:  "a vector of exactly the limit of series is taken",
			value: many[:maxPrometheusSeries],
			want:  nil, // only checked to be no error
		},
		{
			name:    "a vector over the limit of series says so",
			value:   many,
			wantErr: "the query returned 1001 series, over the limit of 1000: aggregate it",
		},
		{
			name:    "a range vector is refused with what to change",
			value:   model.Matrix{},
			wantErr: "the query returned a range vector; a check needs an instant vector or a scalar",
		},
		{
			name:    "a string is refused",
			value:   &model.String{Value: "x"},
			wantErr: "the query returned a string; a check needs an instant vector or a scalar",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resultInput(tc.value)
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("resultInput error = %v, want one starting %q", err, tc.wantErr)
				}
				return
			case err != nil:
				t.Fatalf("resultInput: %v", err)
			case tc.want == nil:
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("resultInput (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDescribeResult(t *testing.T) {
	tests := []struct {
		name  string
		value model.Value
		want  string
	}{
		{name: "a scalar shows its value", value: &model.Scalar{Value: 0.05}, want: "result = 0.05"},
		{name: "a NaN says NaN", value: &model.Scalar{Value: model.SampleValue(math.NaN())}, want: "result = NaN"},
		{name: "an empty vector says there is no series", value: model.Vector{}, want: "the query returned no series"},
		{
			name:  "a vector shows its series and values",
			value: model.Vector{series(0.5, "cluster", "a-1"), series(0.25, "cluster", "a-2")},
			want:  `result: {cluster="a-1"} 0.5, {cluster="a-2"} 0.25`,
		},
		{
			name:  "a vector shows its first five series",
			value: model.Vector{series(1), series(2), series(3), series(4), series(5), series(6), series(7)},
			want:  "result: {} 1, {} 2, {} 3, {} 4, {} 5, 2 more",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, describeResult(tc.value)); diff != "" {
				t.Errorf("describeResult (-want +got):\n%s", diff)
			}
		})
	}
}

func promCheck(name, query, condition string) placementv1beta1.AnalysisCheck {
	return placementv1beta1.AnalysisCheck{Name: name, Prometheus: &placementv1beta1.PrometheusCheck{Query: query, SuccessCondition: condition}}
}

func TestCompilePrometheusChecks(t *testing.T) {
	tests := []struct {
		name    string
		check   placementv1beta1.AnalysisCheck
		wantErr string
	}{
		{name: "a condition over a scalar compiles", check: promCheck("p", "vector(1)", "result < 0.01")},
		{name: "a condition over a vector compiles", check: promCheck("p", "up", "result.all(s, s.value == 1.0 && s.metric.job != '')")},
		{
			name:    "a condition that does not compile is refused, named",
			check:   promCheck("p", "up", "result <"),
			wantErr: "check p: the successCondition does not compile: ERROR: <input>:1:9: Syntax error",
		},
		{
			name:    "a condition that returns a string is refused",
			check:   promCheck("p", "up", "'yes'"),
			wantErr: "check p: the successCondition returns string, not bool",
		},
		{
			name:    "a condition over an unknown variable is refused",
			check:   promCheck("p", "up", "clusters.size() > 0"),
			wantErr: "check p: the successCondition does not compile: ERROR: <input>:1:1: undeclared reference to 'clusters'",
		},
		{
			name: "a check with both kinds is refused",
			check: func() placementv1beta1.AnalysisCheck {
				c := promCheck("p", "up", "true")
				c.CEL = "true"
				return c
			}(),
			wantErr: "check p has both a cel expression and a prometheus query; it needs exactly one",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile([]placementv1beta1.AnalysisCheck{tc.check})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Compile: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
				t.Fatalf("Compile error = %v, want one starting %q", err, tc.wantErr)
			}
		})
	}
}

// A prometheus check on a hub with no Prometheus fails its round, saying which
// flag to set: it neither passes nor stops the hub.
func TestAPrometheusCheckWithNoPrometheusFailsItsRound(t *testing.T) {
	checks, err := Compile([]placementv1beta1.AnalysisCheck{promCheck("errors", "vector(0)", "true")})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Run(context.Background(), checks, Round{Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	want := []CheckResult{fail("errors", "check errors: no Prometheus is configured: start the hub with --prometheus-url")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

// waitForSample waits until the query returns a series of the value.
func waitForSample(t *testing.T, prom Prometheus, query string, value float64) {
	t.Helper()
	poll.Eventually(t, 60*time.Second, 200*time.Millisecond, func() error {
		v, _, _, err := prom.Query(context.Background(), query, time.Now())
		if err != nil {
			return err
		}
		vec, ok := v.(model.Vector)
		if !ok || len(vec) == 0 {
			return fmt.Errorf("%s returned %v", query, v)
		}
		for _, s := range vec {
			if float64(s.Value) == value {
				return nil
			}
		}
		return fmt.Errorf("%s returned %v, want a series of %g", query, v, value)
	})
}

// Analysis rounds run against a real Prometheus that scrapes a flotilla_ metric
// the test changes: rounds pass while the stage's clusters' error ratio is low
// (another stage's high one does not count: {{clusters}} leaves it out), and
// fail, with the values, when one of them rises; a query Prometheus refuses and
// a Prometheus that cannot be reached fail their rounds with the error.
func TestPrometheusChecksAgainstARealPrometheus(t *testing.T) {
	reg := prometheus.NewRegistry()
	ratio := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "flotilla_test_error_ratio", Help: "Share of failing requests, per cluster."}, []string{"cluster"})
	reg.MustRegister(ratio)
	ratio.WithLabelValues("a.1").Set(0.001)
	ratio.WithLabelValues("a-2").Set(0.002)
	ratio.WithLabelValues("b-1").Set(0.9) // another stage's cluster
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	url := testenv.StartPrometheus(t, strings.TrimPrefix(srv.URL, "http://"))
	prom, err := NewPrometheus(PrometheusOptions{URL: url, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	waitForSample(t, prom, `flotilla_test_error_ratio{cluster="a-2"}`, 0.002)

	checks, err := Compile([]placementv1beta1.AnalysisCheck{
		promCheck("max-ratio", `max(flotilla_test_error_ratio{cluster=~"{{clusters}}"})`, "size(result) == 1 && result[0].value < 0.01"),
		promCheck("every-cluster", `flotilla_test_error_ratio{cluster=~"{{clusters}}"}`, "size(result) == 2 && result.all(s, s.value < 0.01)"),
		promCheck("scalar", `scalar(max(flotilla_test_error_ratio{cluster=~"{{clusters}}"}))`, "result < 0.01"),
	})
	if err != nil {
		t.Fatal(err)
	}
	stage := []Cluster{
		{Status: placementv1beta1.PerClusterPlacementStatus{ClusterName: "a.1"}},
		{Status: placementv1beta1.PerClusterPlacementStatus{ClusterName: "a-2"}},
	}
	spec := analysisSpec(2, 1)
	var st placementv1beta1.AnalysisStatus
	roundAt := func(name string) ([]CheckResult, Phase) {
		t.Helper()
		results, err := Run(context.Background(), checks, Round{Clusters: stage, Prometheus: prom, Now: time.Now()})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var phase Phase
		st, phase = JudgeRound(spec, st, results, metav1.Now())
		return results, phase
	}

	// Two passing rounds pass the analysis.
	for i, want := range []Phase{Running, Passed} {
		results, phase := roundAt("passing round")
		if diff := cmp.Diff([]CheckResult{pass("max-ratio"), pass("every-cluster"), pass("scalar")}, results); diff != "" {
			t.Fatalf("round %d (-want +got):\n%s", i+1, diff)
		}
		if phase != want {
			t.Fatalf("round %d: phase %s, want %s", i+1, phase, want)
		}
	}

	// a-2's error ratio rises: the next round fails every check, with the values.
	ratio.WithLabelValues("a-2").Set(0.5)
	waitForSample(t, prom, `flotilla_test_error_ratio{cluster="a-2"}`, 0.5)
	st = placementv1beta1.AnalysisStatus{}
	results, phase := roundAt("failing round")
	want := []CheckResult{
		fail("max-ratio", "check max-ratio: size(result) == 1 && result[0].value < 0.01 is false: result: {} 0.5"),
		fail("every-cluster", `check every-cluster: size(result) == 2 && result.all(s, s.value < 0.01) is false: result: `),
		fail("scalar", "check scalar: result < 0.01 is false: result = 0.5"),
	}
	// The order of a vector's series is Prometheus's: check the series, not the order.
	if got := results[1].Message; strings.HasPrefix(got, want[1].Message) &&
		strings.Contains(got, `flotilla_test_error_ratio{cluster="a-2", instance=`) && strings.Contains(got, `"} 0.5`) &&
		strings.Contains(got, `flotilla_test_error_ratio{cluster="a.1", instance=`) && strings.Contains(got, `"} 0.001`) &&
		!strings.Contains(got, "b-1") {
		want[1].Message = got
	}
	if diff := cmp.Diff(want, results); diff != "" {
		t.Errorf("failing round (-want +got):\n%s", diff)
	}
	if phase != Failed || !strings.HasPrefix(st.LastFailure, "check max-ratio: size(result) == 1 && result[0].value < 0.01 is false: result: {} 0.5; ") {
		t.Errorf("after the failing round: phase %s, status %+v", phase, st)
	}

	// A query Prometheus refuses fails its round with Prometheus's error.
	errorsBefore := testutil.ToFloat64(prometheusQueriesTotal.WithLabelValues(metricQueryError))
	bad, err := Compile([]placementv1beta1.AnalysisCheck{promCheck("bad-query", `max(flotilla_test_error_ratio{cluster=~"{{clusters}}"`, "true")})
	if err != nil {
		t.Fatal(err)
	}
	results, err = Run(context.Background(), bad, Round{Clusters: stage, Prometheus: prom, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if results[0].Passed || !strings.HasPrefix(results[0].Message, "check bad-query: the query failed: bad_data: ") {
		t.Errorf("a query with a syntax error: %+v", results[0])
	}

	// A Prometheus that cannot be reached fails the round with the error.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	gone, err := NewPrometheus(PrometheusOptions{URL: "http://" + closed, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	results, err = Run(context.Background(), checks[:1], Round{Clusters: stage, Prometheus: gone, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if results[0].Passed || !strings.HasPrefix(results[0].Message, "check max-ratio: the query failed: ") {
		t.Errorf("a Prometheus that cannot be reached: %+v", results[0])
	}
	t.Logf("unreachable Prometheus: %s", results[0].Message)
	if got := testutil.ToFloat64(prometheusQueriesTotal.WithLabelValues(metricQueryError)) - errorsBefore; got != 2 {
		t.Errorf("flotilla_updaterun_prometheus_queries_total{result=\"error\"} rose by %g, want 2", got)
	}
}

// A query that takes longer than the timeout fails its round: the hub does not
// wait on a Prometheus that does not answer. (A server that never answers
// stands in for it: a real one answers too fast to show this.)
func TestAQueryOverTheTimeoutFailsItsRound(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	prom, err := NewPrometheus(PrometheusOptions{URL: srv.URL, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	checks, err := Compile([]placementv1beta1.AnalysisCheck{promCheck("slow", "vector(0)", "true")})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got, err := Run(context.Background(), checks, Round{Prometheus: prom, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the round took %s with a 200ms timeout", took)
	}
	if got[0].Passed || !strings.HasPrefix(got[0].Message, "check slow: the query failed: ") || !strings.Contains(got[0].Message, "deadline exceeded") {
		t.Errorf("result = %+v, want a failed query past its deadline", got[0])
	}
}

// The bearer token file is read for every query, so a rotated token is sent
// from the next query on. (A server that checks the header stands in for a
// Prometheus behind an authenticating proxy.)
func TestTheBearerTokenFileIsSentAndReadAgainForEachQuery(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"scalar","result":[1764230400,"0.001"]}}`))
	}))
	t.Cleanup(srv.Close)
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	prom, err := NewPrometheus(PrometheusOptions{URL: srv.URL, BearerTokenFile: token})
	if err != nil {
		t.Fatal(err)
	}
	checks, err := Compile([]placementv1beta1.AnalysisCheck{promCheck("low", "vector(0)", "result < 0.01")})
	if err != nil {
		t.Fatal(err)
	}
	for _, next := range []string{"second", ""} {
		got, err := Run(context.Background(), checks, Round{Prometheus: prom, Now: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		if !got[0].Passed {
			t.Errorf("result = %+v, want a pass", got[0])
		}
		if next != "" {
			if err := os.WriteFile(token, []byte(next), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"Bearer first", "Bearer second"}, seen); diff != "" {
		t.Errorf("Authorization headers (-want +got):\n%s", diff)
	}
}
