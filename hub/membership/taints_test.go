package membership

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
)

func memberWith(connected, healthy metav1.ConditionStatus, since time.Time, taints ...clusterv1beta1.Taint) *clusterv1beta1.MemberCluster {
	mc := &clusterv1beta1.MemberCluster{}
	mc.Spec.Taints = taints
	mc.Status.Conditions = []metav1.Condition{
		{Type: clusterv1beta1.ConditionAgentConnected, Status: connected, LastTransitionTime: metav1.NewTime(since)},
		{Type: clusterv1beta1.ConditionHealthy, Status: healthy, LastTransitionTime: metav1.NewTime(since)},
	}
	return mc
}

func TestDesiredTaints(t *testing.T) {
	since := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	at := metav1.NewTime(since)
	user := clusterv1beta1.Taint{Key: "maintenance", Value: "true", Effect: clusterv1beta1.TaintEffectNoSchedule}
	unreachable := []clusterv1beta1.Taint{
		{Key: clusterv1beta1.TaintUnreachable, Effect: clusterv1beta1.TaintEffectNoSchedule, TimeAdded: &at},
		{Key: clusterv1beta1.TaintUnreachable, Effect: clusterv1beta1.TaintEffectNoExecute, TimeAdded: &at},
	}
	notReady := []clusterv1beta1.Taint{
		{Key: clusterv1beta1.TaintNotReady, Effect: clusterv1beta1.TaintEffectNoSchedule, TimeAdded: &at},
		{Key: clusterv1beta1.TaintNotReady, Effect: clusterv1beta1.TaintEffectNoExecute, TimeAdded: &at},
	}
	for _, tc := range []struct {
		name string
		mc   *clusterv1beta1.MemberCluster
		want []clusterv1beta1.Taint
	}{
		{"a connected healthy cluster has no automatic taints", memberWith(metav1.ConditionTrue, metav1.ConditionTrue, since), nil},
		{"a disconnected agent taints the cluster unreachable from when it disconnected",
			memberWith(metav1.ConditionFalse, metav1.ConditionUnknown, since), unreachable},
		{"an unhealthy API server taints the cluster not-ready",
			memberWith(metav1.ConditionTrue, metav1.ConditionFalse, since), notReady},
		{"user taints are kept", memberWith(metav1.ConditionFalse, metav1.ConditionTrue, since, user), append([]clusterv1beta1.Taint{user}, unreachable...)},
		{"recovery removes the automatic taints and keeps the user's",
			memberWith(metav1.ConditionTrue, metav1.ConditionTrue, since, append([]clusterv1beta1.Taint{user}, unreachable...)...), []clusterv1beta1.Taint{user}},
		{"existing automatic taints are kept as they are (their time does not move)",
			memberWith(metav1.ConditionFalse, metav1.ConditionUnknown, since.Add(time.Hour), unreachable...), unreachable},
		{"a never-connected cluster is not tainted", memberWith(metav1.ConditionUnknown, metav1.ConditionUnknown, since), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, DesiredTaints(tc.mc)); diff != "" {
				t.Errorf("DesiredTaints (-want +got):\n%s", diff)
			}
		})
	}
}
