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

package stages

import (
	"reflect"
	"strings"
	"testing"
)

const before = `# TYPE flotilla_placement_stage_seconds histogram
flotilla_placement_stage_seconds_bucket{stage="work",le="0.01"} 1
flotilla_placement_stage_seconds_bucket{stage="work",le="0.02"} 2
flotilla_placement_stage_seconds_bucket{stage="work",le="+Inf"} 2
flotilla_placement_stage_seconds_sum{stage="work"} 0.02
flotilla_placement_stage_seconds_count{stage="work"} 2
`

const after = `# TYPE flotilla_placement_stage_seconds histogram
flotilla_placement_stage_seconds_bucket{stage="work",le="0.01"} 1
flotilla_placement_stage_seconds_bucket{stage="work",le="0.02"} 12
flotilla_placement_stage_seconds_bucket{stage="work",le="+Inf"} 12
flotilla_placement_stage_seconds_sum{stage="work"} 0.17
flotilla_placement_stage_seconds_count{stage="work"} 12
flotilla_placement_stage_seconds_bucket{stage="applied",le="0.01"} 0
flotilla_placement_stage_seconds_bucket{stage="applied",le="0.02"} 0
flotilla_placement_stage_seconds_bucket{stage="applied",le="+Inf"} 4
flotilla_placement_stage_seconds_sum{stage="applied"} 0.4
flotilla_placement_stage_seconds_count{stage="applied"} 4
flotilla_placement_stage_seconds_bucket{stage="snapshot",le="0.01"} 3
flotilla_placement_stage_seconds_bucket{stage="snapshot",le="0.02"} 3
flotilla_placement_stage_seconds_bucket{stage="snapshot",le="+Inf"} 3
flotilla_placement_stage_seconds_sum{stage="snapshot"} 0.003
flotilla_placement_stage_seconds_count{stage="snapshot"} 3
# TYPE other_total counter
other_total 5
`

func TestSinceGivesEachStageBetweenTwoReadingsInPipelineOrder(t *testing.T) {
	b, err := Parse(strings.NewReader(before))
	if err != nil {
		t.Fatal(err)
	}
	a, err := Parse(strings.NewReader(after))
	if err != nil {
		t.Fatal(err)
	}
	got := a.Since(b)
	want := []Times{
		// all three in the first bucket: interpolated from 0.
		{Name: "snapshot", Count: 3, Mean: 0.001, P50: 0.005, P99: 0.0099},
		// the ten new ones all between 0.01 and 0.02.
		{Name: "work", Count: 10, Mean: 0.015, P50: 0.015, P99: 0.0199},
		// beyond the largest bound: reported as that bound.
		{Name: "applied", Count: 4, Mean: 0.1, P50: 0.02, P99: 0.02},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Since:\n got %+v\nwant %+v", got, want)
	}
	if got := b.Since(b); got != nil {
		t.Errorf("nothing happened between a reading and itself, got %+v", got)
	}
}

func TestParseWithoutTheMetricIsEmpty(t *testing.T) {
	r, err := Parse(strings.NewReader("other_total 1\n"))
	if err != nil || len(r) != 0 {
		t.Errorf("Parse = %v, %v; want empty", r, err)
	}
}

func TestSeriesThatDifferInOtherLabelsAreAddedUp(t *testing.T) {
	r, err := ParseHistograms(strings.NewReader(`# TYPE cycle_seconds histogram
cycle_seconds_bucket{type="PickN",result="scheduled",le="0.01"} 2
cycle_seconds_bucket{type="PickN",result="scheduled",le="+Inf"} 3
cycle_seconds_sum{type="PickN",result="scheduled"} 0.5
cycle_seconds_count{type="PickN",result="scheduled"} 3
cycle_seconds_bucket{type="PickN",result="unfulfilled",le="0.01"} 1
cycle_seconds_bucket{type="PickN",result="unfulfilled",le="+Inf"} 1
cycle_seconds_sum{type="PickN",result="unfulfilled"} 0.005
cycle_seconds_count{type="PickN",result="unfulfilled"} 1
`), "cycle_seconds", "type")
	if err != nil {
		t.Fatal(err)
	}
	got := r.Since(Reading{})
	want := []Times{{Name: "PickN", Count: 4, Mean: 0.1263, P50: 0.0067, P99: 0.01}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
