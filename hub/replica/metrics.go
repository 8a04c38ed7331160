package replica

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var replicaLostMembers = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "flotilla_hub_replica_lost_members_total",
	Help: "Members the leader recorded disconnected because the hub replica holding their session stopped renewing its Lease.",
})

func init() { metrics.Registry.MustRegister(replicaLostMembers) }
