package membership

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// automaticTaintKeys are the taints the hub owns; users own every other taint.
var automaticTaintKeys = map[string]bool{
	clusterv1beta1.TaintUnreachable: true,
	clusterv1beta1.TaintNotReady:    true,
}

// DesiredTaints returns the cluster's taints with the automatic ones made to match
// its conditions: unreachable while AgentConnected is False, not-ready while
// Healthy is False, each with effects NoSchedule and NoExecute, added at the time
// the condition turned False (so tolerationSeconds count from the failure, not
// from when the hub noticed). User taints are kept as they are, in order.
func DesiredTaints(mc *clusterv1beta1.MemberCluster) []clusterv1beta1.Taint {
	want := map[string]*metav1.Time{}
	if c := conditions.Get(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected); c != nil && c.Status == metav1.ConditionFalse {
		t := c.LastTransitionTime
		want[clusterv1beta1.TaintUnreachable] = &t
	}
	if c := conditions.Get(mc.Status.Conditions, clusterv1beta1.ConditionHealthy); c != nil && c.Status == metav1.ConditionFalse {
		t := c.LastTransitionTime
		want[clusterv1beta1.TaintNotReady] = &t
	}
	var out []clusterv1beta1.Taint
	have := map[string]bool{}
	for _, t := range mc.Spec.Taints {
		if automaticTaintKeys[t.Key] {
			if want[t.Key] == nil {
				continue // recovered
			}
			have[t.Key+"/"+string(t.Effect)] = true
		}
		out = append(out, t)
	}
	for _, key := range []string{clusterv1beta1.TaintUnreachable, clusterv1beta1.TaintNotReady} {
		since := want[key]
		if since == nil {
			continue
		}
		for _, effect := range []clusterv1beta1.TaintEffect{clusterv1beta1.TaintEffectNoSchedule, clusterv1beta1.TaintEffectNoExecute} {
			if !have[key+"/"+string(effect)] {
				out = append(out, clusterv1beta1.Taint{Key: key, Effect: effect, TimeAdded: since})
			}
		}
	}
	return out
}
