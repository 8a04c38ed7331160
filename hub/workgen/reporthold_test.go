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

package workgen

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func TestHoldForReport(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	wait := time.Second
	b := boundBinding() // generation 2
	connected := &metav1.Condition{Type: "AgentConnected", Status: metav1.ConditionTrue}
	away := &metav1.Condition{Type: "AgentConnected", Status: metav1.ConditionFalse}
	work := func(conds ...metav1.Condition) *placementv1beta1.Work {
		return &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Status: placementv1beta1.WorkStatus{Conditions: conds}}
	}
	report := func(typ string, gen int64) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, ObservedGeneration: gen}
	}
	in := statusInput{binding: b, work: work(), connected: connected}
	for _, tc := range []struct {
		name string
		in   statusInput
		h    reportHold
		want holdDecision
	}{
		{"a Work just written waits for its report", in,
			reportHold{wait: wait, wrote: true, now: now}, holdDecision{wait: wait, start: true}},
		{"no wait configured writes at once", in,
			reportHold{wait: 0, wrote: true, now: now}, holdDecision{}},
		{"a Work not written now (nothing changed) writes at once", in,
			reportHold{wait: wait, now: now}, holdDecision{}},
		{"a failure to write the Work is written at once", statusInput{binding: b, err: errors.New("boom"), connected: connected},
			reportHold{wait: wait, wrote: true, now: now}, holdDecision{}},
		{"a Work already reported on its generation writes at once", statusInput{binding: b, work: work(report(placementv1beta1.ConditionApplied, 3)), connected: connected},
			reportHold{wait: wait, wrote: true, now: now}, holdDecision{}},
		{"a ReportDiff Work already compared writes at once", statusInput{binding: b, work: work(report(placementv1beta1.ConditionDiffReported, 3)), connected: connected},
			reportHold{wait: wait, wrote: true, now: now}, holdDecision{}},
		{"a report of an older generation of the Work is waited past", statusInput{binding: b, work: work(report(placementv1beta1.ConditionApplied, 2)), connected: connected},
			reportHold{wait: wait, wrote: true, now: now}, holdDecision{wait: wait, start: true}},
		{"a member whose agent is away writes at once", statusInput{binding: b, work: work(), connected: away},
			reportHold{wait: wait, wrote: true, now: now}, holdDecision{}},
		{"a member whose connection is unknown writes at once", statusInput{binding: b, work: work()},
			reportHold{wait: wait, wrote: true, now: now}, holdDecision{}},
		{"a hold of this generation lasts to its end, through the Work's own events", in,
			reportHold{wait: wait, held: &heldFor{generation: 2, until: now.Add(300 * time.Millisecond)}, now: now}, holdDecision{wait: 300 * time.Millisecond}},
		{"a hold of this generation that ended writes, reported or not", in,
			reportHold{wait: wait, wrote: true, held: &heldFor{generation: 2, until: now.Add(-time.Millisecond)}, now: now}, holdDecision{}},
		{"a hold of this generation that was written holds no more", in,
			reportHold{wait: wait, wrote: true, held: &heldFor{generation: 2, until: now.Add(time.Hour), ended: true}, now: now}, holdDecision{}},
		{"a hold of an older generation does not stop a new one", in,
			reportHold{wait: wait, wrote: true, held: &heldFor{generation: 1, until: now.Add(-time.Hour)}, now: now}, holdDecision{wait: wait, start: true}},
		{"a hold of an older generation is no reason to wait", in,
			reportHold{wait: wait, held: &heldFor{generation: 1, until: now.Add(time.Hour)}, now: now}, holdDecision{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := holdForReport(tc.in, tc.h); got != tc.want {
				t.Errorf("holdForReport = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestHoldEnds(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	b := boundBinding() // generation 2
	reportedWork := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Status: placementv1beta1.WorkStatus{Conditions: []metav1.Condition{
		{Type: placementv1beta1.ConditionApplied, Status: metav1.ConditionTrue, ObservedGeneration: 3}}}}
	silentWork := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
	running := &heldFor{generation: 2, until: now.Add(time.Second)}
	over := &heldFor{generation: 2, until: now}
	for _, tc := range []struct {
		name string
		in   statusInput
		held *heldFor
		d    holdDecision
		want string
	}{
		{"the report came within the wait", statusInput{binding: b, work: reportedWork}, running, holdDecision{}, holdReported},
		{"the wait ended first", statusInput{binding: b, work: silentWork}, over, holdDecision{}, holdExpired},
		{"the Work failed meanwhile", statusInput{binding: b, err: errors.New("boom")}, running, holdDecision{}, holdCut},
		{"still waiting ends nothing", statusInput{binding: b, work: silentWork}, running, holdDecision{wait: time.Second}, ""},
		{"no hold, nothing to end", statusInput{binding: b, work: reportedWork}, nil, holdDecision{}, ""},
		{"a hold ended once is not counted again", statusInput{binding: b, work: reportedWork}, &heldFor{generation: 2, until: now, ended: true}, holdDecision{}, ""},
		{"a hold of an older generation is not this write's", statusInput{binding: b, work: reportedWork}, &heldFor{generation: 1, until: now}, holdDecision{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := holdEnds(tc.in, reportHold{held: tc.held, now: now}, tc.d); got != tc.want {
				t.Errorf("holdEnds = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHoldsAreForgotten(t *testing.T) {
	var h holds
	key := types.NamespacedName{Name: "web-m1"}
	if h.get(key) != nil {
		t.Fatal("an empty set holds something")
	}
	h.set(key, heldFor{generation: 2})
	if got := h.get(key); got == nil || got.generation != 2 {
		t.Fatalf("get = %+v, want generation 2", got)
	}
	h.forget(key)
	if h.get(key) != nil {
		t.Fatal("a forgotten hold is still held")
	}
}
