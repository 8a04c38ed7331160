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

package v1beta1_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// stage returns a stage that selects the clusters labelled stage=<name>.
func stage(name string, tasks ...placementv1beta1.AfterStageTask) placementv1beta1.StageConfig {
	return placementv1beta1.StageConfig{
		Name:            name,
		LabelSelector:   &metav1.LabelSelector{MatchLabels: map[string]string{"stage": name}},
		AfterStageTasks: tasks,
	}
}

func approval() placementv1beta1.AfterStageTask {
	return placementv1beta1.AfterStageTask{Type: placementv1beta1.AfterStageTaskTypeApproval}
}

func timedWait(d time.Duration) placementv1beta1.AfterStageTask {
	return placementv1beta1.AfterStageTask{Type: placementv1beta1.AfterStageTaskTypeTimedWait, WaitTime: &metav1.Duration{Duration: d}}
}

// analysis returns an Analysis task that checks the CEL expressions, named
// check-1, check-2, ...
func analysis(onFailure placementv1beta1.AnalysisFailurePolicy, cels ...string) placementv1beta1.AfterStageTask {
	a := &placementv1beta1.Analysis{Interval: metav1.Duration{Duration: 5 * time.Second}, SuccessCount: 3, FailureLimit: 1, OnFailure: onFailure}
	for i, c := range cels {
		a.Checks = append(a.Checks, placementv1beta1.AnalysisCheck{Name: fmt.Sprintf("check-%d", i+1), CEL: c})
	}
	return placementv1beta1.AfterStageTask{Type: placementv1beta1.AfterStageTaskTypeAnalysis, Analysis: a}
}

// withAnalysis returns an Analysis task of one check changed by edit.
func withAnalysis(edit func(*placementv1beta1.Analysis)) placementv1beta1.AfterStageTask {
	t := analysis(placementv1beta1.AnalysisFailureRollback, "clusters.size() > 0")
	edit(t.Analysis)
	return t
}

// withConcurrency returns s with maxConcurrency v.
func withConcurrency(s placementv1beta1.StageConfig, v intstr.IntOrString) placementv1beta1.StageConfig {
	s.MaxConcurrency = &v
	return s
}

func strategy(stages ...placementv1beta1.StageConfig) *placementv1beta1.ClusterStagedUpdateStrategy {
	return &placementv1beta1.ClusterStagedUpdateStrategy{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "strategy-"},
		Spec:       placementv1beta1.StagedUpdateStrategySpec{Stages: stages},
	}
}

func TestStagedUpdateStrategyValidation(t *testing.T) {
	tests := []struct {
		name        string
		strategy    *placementv1beta1.ClusterStagedUpdateStrategy
		wantRefusal string
	}{
		{
			name: "canary with an approval, then prod with a timed wait, is accepted",
			strategy: strategy(
				withConcurrency(stage("canary", approval()), intstr.FromInt32(1)),
				withConcurrency(stage("prod", timedWait(time.Minute)), intstr.FromString("50%")),
			),
		},
		{
			name: "a stage with both an approval and a timed wait is accepted",
			strategy: strategy(func() placementv1beta1.StageConfig {
				s := stage("canary", approval(), timedWait(30*time.Second))
				s.SortingLabelKey = ptr.To("order")
				return s
			}()),
		},
		{
			name:        "a strategy without stages is refused",
			strategy:    strategy(),
			wantRefusal: "spec.stages: Required value",
		},
		{
			name:        "two stages with one name are refused",
			strategy:    strategy(stage("canary"), stage("canary")),
			wantRefusal: "stage names must be unique",
		},
		{
			name:        "a stage name that is not a DNS label is refused",
			strategy:    strategy(stage("Canary_1")),
			wantRefusal: "spec.stages[0].name: Invalid value: \"Canary_1\"",
		},
		{
			name: "a stage without a labelSelector is refused",
			strategy: strategy(func() placementv1beta1.StageConfig {
				s := stage("canary")
				s.LabelSelector = nil
				return s
			}()),
			wantRefusal: "spec.stages[0].labelSelector: Required value",
		},
		{
			name:        "a TimedWait task without waitTime is refused",
			strategy:    strategy(stage("canary", placementv1beta1.AfterStageTask{Type: placementv1beta1.AfterStageTaskTypeTimedWait})),
			wantRefusal: "a TimedWait task needs waitTime",
		},
		{
			name: "an Approval task with a waitTime is refused",
			strategy: strategy(stage("canary", placementv1beta1.AfterStageTask{
				Type: placementv1beta1.AfterStageTaskTypeApproval, WaitTime: &metav1.Duration{Duration: time.Minute},
			})),
			wantRefusal: "only a TimedWait task takes waitTime",
		},
		{
			name: "a canary with an analysis that rolls back, an approval and a timed wait is accepted",
			strategy: strategy(stage("canary", analysis(placementv1beta1.AnalysisFailureRollback, "clusters.all(c, size(c.driftedPlacements) == 0)"),
				approval(), timedWait(time.Minute)), stage("prod")),
		},
		{
			name:     "an analysis with ten checks is accepted",
			strategy: strategy(stage("canary", analysis(placementv1beta1.AnalysisFailurePause, "true", "true", "true", "true", "true", "true", "true", "true", "true", "true"))),
		},
		{
			name:        "an Analysis task without an analysis is refused",
			strategy:    strategy(stage("canary", placementv1beta1.AfterStageTask{Type: placementv1beta1.AfterStageTaskTypeAnalysis})),
			wantRefusal: "an Analysis task needs analysis, and only an Analysis task takes it",
		},
		{
			name: "an Approval task with an analysis is refused",
			strategy: strategy(stage("canary", func() placementv1beta1.AfterStageTask {
				t := analysis(placementv1beta1.AnalysisFailurePause, "true")
				t.Type = placementv1beta1.AfterStageTaskTypeApproval
				return t
			}())),
			wantRefusal: "an Analysis task needs analysis, and only an Analysis task takes it",
		},
		{
			name: "an Analysis task with a waitTime is refused",
			strategy: strategy(stage("canary", func() placementv1beta1.AfterStageTask {
				t := analysis(placementv1beta1.AnalysisFailurePause, "true")
				t.WaitTime = &metav1.Duration{Duration: time.Minute}
				return t
			}())),
			wantRefusal: "only a TimedWait task takes waitTime",
		},
		{
			name:        "two analyses after one stage are refused",
			strategy:    strategy(stage("canary", analysis(placementv1beta1.AnalysisFailurePause, "true"), analysis(placementv1beta1.AnalysisFailurePause, "true"))),
			wantRefusal: "at most one after-stage task of each type",
		},
		{
			name:        "an analysis without checks is refused",
			strategy:    strategy(stage("canary", analysis(placementv1beta1.AnalysisFailurePause))),
			wantRefusal: "spec.stages[0].afterStageTasks[0].analysis.checks",
		},
		{
			name:        "an analysis with eleven checks is refused",
			strategy:    strategy(stage("canary", analysis(placementv1beta1.AnalysisFailurePause, "true", "true", "true", "true", "true", "true", "true", "true", "true", "true", "true"))),
			wantRefusal: "spec.stages[0].afterStageTasks[0].analysis.checks: Too many",
		},
		{
			name: "two checks with one name are refused",
			strategy: strategy(stage("canary", withAnalysis(func(a *placementv1beta1.Analysis) {
				a.Checks = append(a.Checks, a.Checks[0])
			}))),
			wantRefusal: "check names must be unique",
		},
		{
			name: "a check with no kind of check is refused",
			strategy: strategy(stage("canary", withAnalysis(func(a *placementv1beta1.Analysis) {
				a.Checks[0].CEL = ""
			}))),
			wantRefusal: "a check needs exactly one kind of check: cel or prometheus",
		},
		{
			name: "a prometheus check is accepted",
			strategy: strategy(stage("canary", withAnalysis(func(a *placementv1beta1.Analysis) {
				a.Checks[0].CEL = ""
				a.Checks[0].Prometheus = &placementv1beta1.PrometheusCheck{Query: `max(flotilla_errors{cluster=~"{{clusters}}"})`, SuccessCondition: "result < 0.01"}
			}))),
		},
		{
			name: "a check with both cel and prometheus is refused",
			strategy: strategy(stage("canary", withAnalysis(func(a *placementv1beta1.Analysis) {
				a.Checks[0].Prometheus = &placementv1beta1.PrometheusCheck{Query: "vector(1)", SuccessCondition: "true"}
			}))),
			wantRefusal: "a check needs exactly one kind of check: cel or prometheus",
		},
		{
			name: "a prometheus check with no successCondition is refused",
			strategy: strategy(stage("canary", withAnalysis(func(a *placementv1beta1.Analysis) {
				a.Checks[0].CEL = ""
				a.Checks[0].Prometheus = &placementv1beta1.PrometheusCheck{Query: "vector(1)"}
			}))),
			wantRefusal: "spec.stages[0].afterStageTasks[0].analysis.checks[0].prometheus.successCondition",
		},
		{
			name: "a query over 4 KiB is refused",
			strategy: strategy(stage("canary", withAnalysis(func(a *placementv1beta1.Analysis) {
				a.Checks[0].CEL = ""
				a.Checks[0].Prometheus = &placementv1beta1.PrometheusCheck{Query: "vector(1)" + strings.Repeat(" ", placementv1beta1.MaxPrometheusQueryLength), SuccessCondition: "true"}
			}))),
			wantRefusal: "spec.stages[0].afterStageTasks[0].analysis.checks[0].prometheus.query: Too long",
		},
		{
			name: "a successCondition over 1 KiB is refused",
			strategy: strategy(stage("canary", withAnalysis(func(a *placementv1beta1.Analysis) {
				a.Checks[0].CEL = ""
				a.Checks[0].Prometheus = &placementv1beta1.PrometheusCheck{Query: "vector(1)", SuccessCondition: "true" + strings.Repeat(" ", placementv1beta1.MaxPrometheusConditionLength)}
			}))),
			wantRefusal: "spec.stages[0].afterStageTasks[0].analysis.checks[0].prometheus.successCondition: Too long",
		},
		{
			name: "a cel expression over 4 KiB is refused",
			strategy: strategy(stage("canary", withAnalysis(func(a *placementv1beta1.Analysis) {
				a.Checks[0].CEL = "true" + strings.Repeat(" ", placementv1beta1.MaxAnalysisCheckExpressionLength)
			}))),
			wantRefusal: "spec.stages[0].afterStageTasks[0].analysis.checks[0].cel: Too long",
		},
		{
			name: "a check name that is not a DNS label is refused",
			strategy: strategy(stage("canary", withAnalysis(func(a *placementv1beta1.Analysis) {
				a.Checks[0].Name = "Replicas Sane"
			}))),
			wantRefusal: "spec.stages[0].afterStageTasks[0].analysis.checks[0].name",
		},
		{
			name: "an interval under a second is refused",
			strategy: strategy(stage("canary", withAnalysis(func(a *placementv1beta1.Analysis) {
				a.Interval = metav1.Duration{Duration: 500 * time.Millisecond}
			}))),
			wantRefusal: "interval must be a duration from 1s to 1h",
		},
		{
			name: "an interval over an hour is refused",
			strategy: strategy(stage("canary", withAnalysis(func(a *placementv1beta1.Analysis) {
				a.Interval = metav1.Duration{Duration: 61 * time.Minute}
			}))),
			wantRefusal: "interval must be a duration from 1s to 1h",
		},
		{
			name: "a successCount over 100 is refused",
			strategy: strategy(stage("canary", withAnalysis(func(a *placementv1beta1.Analysis) {
				a.SuccessCount = 101
			}))),
			wantRefusal: "spec.stages[0].afterStageTasks[0].analysis.successCount",
		},
		{
			name: "a failureLimit over 100 is refused",
			strategy: strategy(stage("canary", withAnalysis(func(a *placementv1beta1.Analysis) {
				a.FailureLimit = 101
			}))),
			wantRefusal: "spec.stages[0].afterStageTasks[0].analysis.failureLimit",
		},
		{
			name: "an unknown onFailure is refused",
			strategy: strategy(stage("canary", withAnalysis(func(a *placementv1beta1.Analysis) {
				a.OnFailure = "RollbackAll"
			}))),
			wantRefusal: `spec.stages[0].afterStageTasks[0].analysis.onFailure: Unsupported value: "RollbackAll"`,
		},
		{
			name:        "two approvals after one stage are refused",
			strategy:    strategy(stage("canary", approval(), approval())),
			wantRefusal: "at most one after-stage task of each type",
		},
		{
			name:        "an unknown task type is refused",
			strategy:    strategy(stage("canary", placementv1beta1.AfterStageTask{Type: "Pause"})),
			wantRefusal: `spec.stages[0].afterStageTasks[0].type: Unsupported value: "Pause"`,
		},
		{
			name:        "a maxConcurrency of 0 is refused",
			strategy:    strategy(withConcurrency(stage("canary"), intstr.FromInt32(0))),
			wantRefusal: "spec.stages[0].maxConcurrency",
		},
		{
			name:        "a maxConcurrency of 0% is refused",
			strategy:    strategy(withConcurrency(stage("canary"), intstr.FromString("0%"))),
			wantRefusal: "spec.stages[0].maxConcurrency",
		},
		{
			name:        "a maxConcurrency over 100% is refused",
			strategy:    strategy(withConcurrency(stage("canary"), intstr.FromString("101%"))),
			wantRefusal: "spec.stages[0].maxConcurrency",
		},
		{
			name:        "a maxConcurrency that is neither a number nor a percentage is refused",
			strategy:    strategy(withConcurrency(stage("canary"), intstr.FromString("half"))),
			wantRefusal: "spec.stages[0].maxConcurrency",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := env.Client.Create(context.Background(), tc.strategy)
			testenv.CheckValidation(t, err, tc.wantRefusal)
		})
	}
}

func updateRun(placement, index, strategy string) *placementv1beta1.ClusterStagedUpdateRun {
	return &placementv1beta1.ClusterStagedUpdateRun{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "run-"},
		Spec: placementv1beta1.StagedUpdateRunSpec{
			PlacementName:            placement,
			ResourceSnapshotIndex:    index,
			StagedUpdateStrategyName: strategy,
		},
	}
}

// An analysis that leaves out successCount, failureLimit and onFailure gets 1, 1
// and Pause.
func TestAnalysisDefaults(t *testing.T) {
	ctx := context.Background()
	s := strategy(stage("canary", placementv1beta1.AfterStageTask{Type: placementv1beta1.AfterStageTaskTypeAnalysis, Analysis: &placementv1beta1.Analysis{
		Interval: metav1.Duration{Duration: time.Second}, Checks: []placementv1beta1.AnalysisCheck{{Name: "any", CEL: "true"}},
	}}))
	if err := env.Client.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	got := &placementv1beta1.ClusterStagedUpdateStrategy{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(s), got); err != nil {
		t.Fatal(err)
	}
	a := got.Spec.Stages[0].AfterStageTasks[0].Analysis
	if a.SuccessCount != 1 || a.FailureLimit != 1 || a.OnFailure != placementv1beta1.AnalysisFailurePause {
		t.Errorf("successCount %d, failureLimit %d, onFailure %q; want 1, 1, Pause", a.SuccessCount, a.FailureLimit, a.OnFailure)
	}
}

func TestStagedUpdateRunValidation(t *testing.T) {
	tests := []struct {
		name        string
		run         *placementv1beta1.ClusterStagedUpdateRun
		wantRefusal string
	}{
		{
			name: "a run of index 0 is accepted",
			run:  updateRun("web", "0", "canary-then-prod"),
		},
		{
			name: "a stopped run is accepted",
			run: func() *placementv1beta1.ClusterStagedUpdateRun {
				r := updateRun("web", "12", "canary-then-prod")
				r.Spec.State = placementv1beta1.StagedUpdateRunStateStop
				return r
			}(),
		},
		{
			name:        "a run without a placement is refused",
			run:         updateRun("", "1", "canary-then-prod"),
			wantRefusal: "spec.placementName",
		},
		{
			name:        "a run without a strategy is refused",
			run:         updateRun("web", "1", ""),
			wantRefusal: "spec.stagedRolloutStrategyName",
		},
		{
			name:        "a negative index is refused",
			run:         updateRun("web", "-1", "canary-then-prod"),
			wantRefusal: `spec.resourceSnapshotIndex: Invalid value: "-1"`,
		},
		{
			name:        "an index with a leading zero is refused",
			run:         updateRun("web", "01", "canary-then-prod"),
			wantRefusal: `spec.resourceSnapshotIndex: Invalid value: "01"`,
		},
		{
			name:        "an index that is not a number is refused",
			run:         updateRun("web", "latest", "canary-then-prod"),
			wantRefusal: `spec.resourceSnapshotIndex: Invalid value: "latest"`,
		},
		{
			name: "an unknown state is refused",
			run: func() *placementv1beta1.ClusterStagedUpdateRun {
				r := updateRun("web", "1", "canary-then-prod")
				r.Spec.State = "Pause"
				return r
			}(),
			wantRefusal: `spec.state: Unsupported value: "Pause"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := env.Client.Create(context.Background(), tc.run)
			testenv.CheckValidation(t, err, tc.wantRefusal)
		})
	}
}

func TestStagedUpdateRunDefaultsToRun(t *testing.T) {
	ctx := context.Background()
	r := updateRun("web", "1", "canary-then-prod")
	if err := env.Client.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	got := &placementv1beta1.ClusterStagedUpdateRun{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(r), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.State != placementv1beta1.StagedUpdateRunStateRun {
		t.Errorf("spec.state = %q, want %q", got.Spec.State, placementv1beta1.StagedUpdateRunStateRun)
	}
}

func TestStagedUpdateRunUpdateValidation(t *testing.T) {
	tests := []struct {
		name        string
		update      func(*placementv1beta1.StagedUpdateRunSpec)
		wantRefusal string
	}{
		{
			name:   "stopping a run is accepted",
			update: func(s *placementv1beta1.StagedUpdateRunSpec) { s.State = placementv1beta1.StagedUpdateRunStateStop },
		},
		{
			name:        "changing the placement is refused",
			update:      func(s *placementv1beta1.StagedUpdateRunSpec) { s.PlacementName = "other" },
			wantRefusal: "placementName is immutable; create a new run",
		},
		{
			name:        "changing the resource snapshot index is refused",
			update:      func(s *placementv1beta1.StagedUpdateRunSpec) { s.ResourceSnapshotIndex = "0" },
			wantRefusal: "resourceSnapshotIndex is immutable; create a new run",
		},
		{
			name:        "changing the strategy is refused",
			update:      func(s *placementv1beta1.StagedUpdateRunSpec) { s.StagedUpdateStrategyName = "other" },
			wantRefusal: "stagedRolloutStrategyName is immutable; create a new run",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			r := updateRun("web", "1", "canary-then-prod")
			if err := env.Client.Create(ctx, r); err != nil {
				t.Fatalf("failed to create the run: %v", err)
			}
			tc.update(&r.Spec)
			err := env.Client.Update(ctx, r)
			testenv.CheckValidation(t, err, tc.wantRefusal)
		})
	}
}

func TestApprovalRequestValidation(t *testing.T) {
	ctx := context.Background()
	req := &placementv1beta1.ClusterApprovalRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "run-1-canary-"},
		Spec:       placementv1beta1.ApprovalRequestSpec{ParentStageRollout: "run-1", TargetStage: "canary"},
	}
	if err := env.Client.Create(ctx, req); err != nil {
		t.Fatalf("failed to create the approval request: %v", err)
	}

	t.Run("its spec cannot be changed", func(t *testing.T) {
		changed := req.DeepCopy()
		changed.Spec.TargetStage = "prod"
		testenv.CheckValidation(t, env.Client.Update(ctx, changed), "spec is immutable")
	})

	t.Run("a user approves it on the status subresource", func(t *testing.T) {
		approved := req.DeepCopy()
		approved.Status.Conditions = []metav1.Condition{{
			Type: placementv1beta1.ConditionApprovalRequestApprovedByUser, Status: metav1.ConditionTrue,
			Reason: "ApprovedByUser", Message: "looks good", LastTransitionTime: metav1.Now(),
		}}
		if err := env.Client.Status().Update(ctx, approved); err != nil {
			t.Fatalf("failed to approve: %v", err)
		}
		got := &placementv1beta1.ClusterApprovalRequest{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(req), got); err != nil {
			t.Fatal(err)
		}
		if len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Status != metav1.ConditionTrue {
			t.Errorf("status.conditions = %+v, want Approved=True", got.Status.Conditions)
		}
	})

	t.Run("a request without a stage is refused", func(t *testing.T) {
		bad := &placementv1beta1.ClusterApprovalRequest{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "run-1-"},
			Spec:       placementv1beta1.ApprovalRequestSpec{ParentStageRollout: "run-1"},
		}
		testenv.CheckValidation(t, env.Client.Create(ctx, bad), "spec.targetStage")
	})
}
