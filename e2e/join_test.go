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

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
)

// A member that has just joined is Healthy=Unknown until its agent reports, and
// is never tainted not-ready on the way: joining raises no taint Event (no e2e
// test makes a member API server unhealthy, so any not-ready taint Event would
// come from a join).
func TestJoiningRaisesNoTaintEvent(t *testing.T) {
	ctx := context.Background()
	hub := hubClient(t)
	for _, m := range allMembers {
		framework.Eventually(t, time.Minute, framework.MemberCondition(ctx, hub, m, clusterv1beta1.ConditionHealthy, metav1.ConditionTrue))
	}
	events := &eventsv1.EventList{}
	if err := hub.List(ctx, events); err != nil {
		t.Fatal(err)
	}
	var tainted []string
	for _, e := range events.Items {
		if e.Regarding.Kind == "MemberCluster" && e.Reason == "TaintAdded" && strings.Contains(e.Note, clusterv1beta1.TaintNotReady) {
			tainted = append(tainted, fmt.Sprintf("%s: %s", e.Regarding.Name, e.Note))
		}
	}
	if len(tainted) > 0 {
		t.Errorf("members were tainted not-ready:\n%s", strings.Join(tainted, "\n"))
	}
}
