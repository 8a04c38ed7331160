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
