package failover

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

func boundTo(cluster string, available bool) placementv1beta1.ClusterResourceBinding {
	b := placementv1beta1.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "p-" + cluster, Generation: 1},
		Spec:       placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateBound, TargetCluster: cluster},
	}
	if available {
		conditions.Set(&b.Status.Conditions, placementv1beta1.ConditionAvailable, metav1.ConditionTrue, "Available", "", 1)
	}
	return b
}
