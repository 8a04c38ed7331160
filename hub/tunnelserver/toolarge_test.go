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

package tunnelserver

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

func TestAWorkTooLargeForTheAgentSaysSoAndWhatToChange(t *testing.T) {
	st := placementv1beta1.WorkStatus{}
	sendErr := fmt.Errorf("%w: WorkUpsert payload of 20971520 bytes exceeds the limit of 16777216", tunnel.ErrFrameTooLarge)
	tooLargeStatus(&st, 4, 20971520, sendErr)
	applied := conditions.Get(st.Conditions, placementv1beta1.ConditionApplied)
	if applied == nil || applied.Status != metav1.ConditionFalse || applied.Reason != placementv1beta1.ReasonWorkTooLarge || applied.ObservedGeneration != 4 {
		t.Fatalf("Applied = %+v, want False WorkTooLarge for generation 4", applied)
	}
	for _, want := range []string{"20971520 bytes", "16777216", "select fewer or smaller resources"} {
		if !strings.Contains(applied.Message, want) {
			t.Errorf("Applied's message %q does not say %q", applied.Message, want)
		}
	}
	if c := conditions.Get(st.Conditions, placementv1beta1.ConditionAvailable); c == nil || c.Status != metav1.ConditionUnknown {
		t.Errorf("Available = %+v, want Unknown", c)
	}
}
