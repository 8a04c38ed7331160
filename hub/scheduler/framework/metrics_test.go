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
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func TestEveryCycleIsTimedByTypeAndResult(t *testing.T) {
	f := NewWithPlugins(Options{})
	count := func(kind placementv1beta1.PlacementType, result string) int {
		m := &dto.Metric{}
		if err := cycleSeconds.WithLabelValues(string(kind), result).(prometheus.Histogram).Write(m); err != nil {
			t.Fatal(err)
		}
		return int(m.GetHistogram().GetSampleCount())
	}
	for _, tc := range []struct {
		name     string
		in       CycleInput
		kind     placementv1beta1.PlacementType
		result   string
		wantFail bool
	}{
		{"a PickAll onto a cluster is scheduled", CycleInput{Clusters: []clusterv1beta1.MemberCluster{{}}}, placementv1beta1.PickAll, cycleScheduled, false},
		{"a PickAll without clusters is unfulfilled", CycleInput{}, placementv1beta1.PickAll, cycleUnfulfilled, false},
		{"a PickN without numberOfClusters is an error",
			CycleInput{Policy: &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickN}}, placementv1beta1.PickN, cycleError, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := count(tc.kind, tc.result)
			if _, err := f.RunCycle(t.Context(), tc.in); (err != nil) != tc.wantFail {
				t.Fatalf("RunCycle() error = %v", err)
			}
			if got := count(tc.kind, tc.result) - before; got != 1 {
				t.Errorf("cycles timed as %s/%s: %d, want 1", tc.kind, tc.result, got)
			}
		})
	}
}
