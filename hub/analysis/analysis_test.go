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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func analysisSpec(successCount, failureLimit int32) *placementv1beta1.Analysis {
	return &placementv1beta1.Analysis{Interval: metav1.Duration{Duration: 5 * time.Second}, SuccessCount: successCount, FailureLimit: failureLimit}
}

func pass(name string) CheckResult { return CheckResult{Name: name, Passed: true} }

func fail(name, msg string) CheckResult { return CheckResult{Name: name, Message: msg} }

func TestJudgeRound(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	tests := []struct {
		name      string
		spec      *placementv1beta1.Analysis
		before    placementv1beta1.AnalysisStatus
		round     []CheckResult
		want      placementv1beta1.AnalysisStatus
		wantPhase Phase
	}{
		{
			name:      "a first passing round of three needed keeps the analysis running",
			spec:      analysisSpec(3, 1),
			round:     []CheckResult{pass("a"), pass("b")},
			want:      placementv1beta1.AnalysisStatus{Rounds: 1, ConsecutiveSuccesses: 1, LastRoundTime: &now},
			wantPhase: Running,
		},
		{
			name:      "the third passing round in a row passes the analysis",
			spec:      analysisSpec(3, 1),
			before:    placementv1beta1.AnalysisStatus{Rounds: 2, ConsecutiveSuccesses: 2},
			round:     []CheckResult{pass("a")},
			want:      placementv1beta1.AnalysisStatus{Rounds: 3, ConsecutiveSuccesses: 3, LastRoundTime: &now},
			wantPhase: Passed,
		},
		{
			name:      "one failing check fails the round and, with a failure limit of 1, the analysis",
			spec:      analysisSpec(3, 1),
			before:    placementv1beta1.AnalysisStatus{Rounds: 2, ConsecutiveSuccesses: 2},
			round:     []CheckResult{pass("a"), fail("b", "check b is false on a-1")},
			want:      placementv1beta1.AnalysisStatus{Rounds: 3, Failures: 1, LastFailure: "check b is false on a-1", LastRoundTime: &now},
			wantPhase: Failed,
		},
		{
			name:      "a failing round under the failure limit resets the passing rounds in a row",
			spec:      analysisSpec(2, 3),
			before:    placementv1beta1.AnalysisStatus{Rounds: 1, ConsecutiveSuccesses: 1},
			round:     []CheckResult{fail("a", "check a is false on a-1")},
			want:      placementv1beta1.AnalysisStatus{Rounds: 2, Failures: 1, LastFailure: "check a is false on a-1", LastRoundTime: &now},
			wantPhase: Running,
		},
		{
			name:      "failures count in all, not in a row: the third reaches a limit of 3",
			spec:      analysisSpec(5, 3),
			before:    placementv1beta1.AnalysisStatus{Rounds: 6, ConsecutiveSuccesses: 1, Failures: 2, LastFailure: "old"},
			round:     []CheckResult{fail("a", "new")},
			want:      placementv1beta1.AnalysisStatus{Rounds: 7, Failures: 3, LastFailure: "new", LastRoundTime: &now},
			wantPhase: Failed,
		},
		{
			name:      "a passing round keeps the last failure for the record",
			spec:      analysisSpec(2, 3),
			before:    placementv1beta1.AnalysisStatus{Rounds: 2, Failures: 1, LastFailure: "old"},
			round:     []CheckResult{pass("a")},
			want:      placementv1beta1.AnalysisStatus{Rounds: 3, ConsecutiveSuccesses: 1, Failures: 1, LastFailure: "old", LastRoundTime: &now},
			wantPhase: Running,
		},
		{
			name:      "every failing check of a round is in the last failure",
			spec:      analysisSpec(1, 2),
			round:     []CheckResult{fail("a", "check a is false on a-1"), pass("b"), fail("c", "check c could not be evaluated: no such key: x")},
			want:      placementv1beta1.AnalysisStatus{Rounds: 1, Failures: 1, LastFailure: "check a is false on a-1; check c could not be evaluated: no such key: x", LastRoundTime: &now},
			wantPhase: Running,
		},
		{
			name:      "limits of 0 (not defaulted) count as 1",
			spec:      analysisSpec(0, 0),
			round:     []CheckResult{pass("a")},
			want:      placementv1beta1.AnalysisStatus{Rounds: 1, ConsecutiveSuccesses: 1, LastRoundTime: &now},
			wantPhase: Passed,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, phase := JudgeRound(tc.spec, tc.before, tc.round, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if phase != tc.wantPhase {
				t.Errorf("phase = %s, want %s", phase, tc.wantPhase)
			}
		})
	}
}

func TestJudgeRoundCutsALongFailureTo1KiB(t *testing.T) {
	long := strings.Repeat("é", 2000)
	got, _ := JudgeRound(analysisSpec(1, 1), placementv1beta1.AnalysisStatus{}, []CheckResult{fail("a", long)}, metav1.Now())
	if len(got.LastFailure) > MaxFailureMessage || !strings.HasSuffix(got.LastFailure, " …") || !strings.HasPrefix(got.LastFailure, "éé") {
		t.Errorf("lastFailure is %d bytes: %q...", len(got.LastFailure), got.LastFailure[:10])
	}
}

func TestNextRoundIn(t *testing.T) {
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(d)); return &t }
	tests := []struct {
		name string
		last *metav1.Time
		want time.Duration
	}{
		{name: "the first round runs at once", last: nil, want: 0},
		{name: "a round 2s ago, every 5s, is followed in 3s", last: at(-2 * time.Second), want: 3 * time.Second},
		{name: "a round an interval ago is followed at once", last: at(-5 * time.Second), want: 0},
		{name: "a late round runs at once", last: at(-time.Minute), want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := NextRoundIn(tc.last, 5*time.Second, now); got != tc.want {
				t.Errorf("NextRoundIn = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestCompileChecksSaysWhatIsWrong(t *testing.T) {
	tests := []struct {
		name    string
		cel     string
		wantErr string
	}{
		{
			name: "the issue's example compiles",
			cel:  "clusters.all(c, c.feedback.all(f, f.kind != 'Deployment' || f.values.all(v, v.name != 'replicas' || int(v.value) <= 3)))",
		},
		{
			name: "a check over labels and conditions compiles",
			cel:  "clusters.filter(c, c.labels['env'] == 'canary').all(c, c.conditions.exists(x, x.type == 'Available' && x.status == 'True'))",
		},
		{
			name:    "a syntax error names the check and where it is",
			cel:     "clusters.all(c, c.feedback.size() >",
			wantErr: "check replicas: the cel expression does not compile: ERROR: <input>:1:36: Syntax error",
		},
		{
			name:    "an unknown variable is named",
			cel:     "cluster.size() > 0",
			wantErr: "check replicas: the cel expression does not compile: ERROR: <input>:1:1: undeclared reference to 'cluster'",
		},
		{
			name:    "an expression that is not a bool is refused",
			cel:     "clusters.size()",
			wantErr: "check replicas: the cel expression returns int, not bool",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile([]placementv1beta1.AnalysisCheck{{Name: "replicas", CEL: tc.cel}})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Compile: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
				t.Fatalf("Compile error = %v, want one starting %q", err, tc.wantErr)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Errorf("the error is not one line: %q", err)
			}
		})
	}
}

// feedbackCluster is a cluster whose Deployment app/web reports replicas.
func feedbackCluster(name, replicas string, labels map[string]string) Cluster {
	return Cluster{Labels: labels, Status: placementv1beta1.PerClusterPlacementStatus{
		ClusterName:           name,
		ObservedResourceIndex: "1",
		Feedback: []placementv1beta1.ResourceFeedback{{
			ResourceIdentifier: placementv1beta1.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "app", Name: "web"},
			Values:             []placementv1beta1.FeedbackValue{{Name: "replicas", Value: replicas}},
		}},
		Conditions: []metav1.Condition{{Type: placementv1beta1.ConditionAvailable, Status: metav1.ConditionTrue}},
	}}
}

func TestRunChecks(t *testing.T) {
	const replicasAtMost3 = "clusters.all(c, c.feedback.all(f, f.kind != 'Deployment' || f.values.all(v, v.name != 'replicas' || int(v.value) <= 3)))"
	canary := map[string]string{"env": "canary"}
	tests := []struct {
		name     string
		cel      string
		clusters []Cluster
		want     CheckResult
	}{
		{
			name:     "replicas within the limit on every cluster pass",
			cel:      replicasAtMost3,
			clusters: []Cluster{feedbackCluster("a-1", "3", canary), feedbackCluster("a-2", "1", canary)},
			want:     pass("replicas"),
		},
		{
			name:     "a replica count over the limit fails, naming the cluster and its values",
			cel:      replicasAtMost3,
			clusters: []Cluster{feedbackCluster("a-1", "3", canary), feedbackCluster("a-2", "5", canary)},
			want:     fail("replicas", "check replicas is false on a-2 (Deployment app/web: replicas=5)"),
		},
		{
			name:     "a check over the whole stage that no cluster fails alone says so",
			cel:      "clusters.size() >= 2",
			clusters: []Cluster{feedbackCluster("a-1", "3", canary)},
			want:     fail("replicas", "check replicas is false on a-1 (Deployment app/web: replicas=3)"),
		},
		{
			name:     "a cluster without feedback sees empty lists, not missing keys",
			cel:      "clusters.all(c, size(c.feedback) == 0 && size(c.driftedPlacements) == 0 && size(c.failedPlacements) == 0)",
			clusters: []Cluster{{Status: placementv1beta1.PerClusterPlacementStatus{ClusterName: "a-1"}}},
			want:     pass("replicas"),
		},
		{
			name:     "labels are the cluster's labels",
			cel:      "clusters.all(c, c.labels.env == 'canary' && c.clusterName == 'a-1' && c.observedResourceIndex == '1')",
			clusters: []Cluster{feedbackCluster("a-1", "3", canary)},
			want:     pass("replicas"),
		},
		{
			name:     "conditions are seen as status.placementStatuses has them",
			cel:      "clusters.all(c, c.conditions.exists(x, x.type == 'Available' && x.status == 'True'))",
			clusters: []Cluster{feedbackCluster("a-1", "3", canary)},
			want:     pass("replicas"),
		},
		{
			name:     "a value that is not a number fails its round with the evaluation error",
			cel:      replicasAtMost3,
			clusters: []Cluster{feedbackCluster("a-1", "many", canary)},
			want:     fail("replicas", "check replicas could not be evaluated: type conversion error from 'string' to 'int'"),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checks, err := Compile([]placementv1beta1.AnalysisCheck{{Name: "replicas", CEL: tc.cel}})
			if err != nil {
				t.Fatal(err)
			}
			got, err := Run(context.Background(), checks, Round{Clusters: tc.clusters})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]CheckResult{tc.want}, got); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
		})
	}
}

func TestACheckThatLoopsTooMuchIsStoppedByTheCostLimit(t *testing.T) {
	checks, err := Compile([]placementv1beta1.AnalysisCheck{{Name: "costly", CEL: "clusters.all(a, clusters.all(b, clusters.all(c, clusters.all(d, a.clusterName + b.clusterName + c.clusterName + d.clusterName != ''))))"}})
	if err != nil {
		t.Fatal(err)
	}
	var many []Cluster
	for i := 0; i < 200; i++ {
		many = append(many, Cluster{Status: placementv1beta1.PerClusterPlacementStatus{ClusterName: "c"}})
	}
	got, err := Run(context.Background(), checks, Round{Clusters: many})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Passed || !strings.Contains(got[0].Message, "could not be evaluated") {
		t.Errorf("result = %+v, want a failure to evaluate", got[0])
	}
}
