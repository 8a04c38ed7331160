package join

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	joinAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_join_requests_total",
		Help: "Join, renew and leave requests, by outcome (accepted, refused, rate-limited, error).",
	}, []string{"outcome"})
	certificatesRenewed = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "flotilla_member_certificates_renewed_total",
		Help: "Member certificates renewed over mutual TLS.",
	})
	tokensExpired = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "flotilla_bootstrap_tokens_expired_total",
		Help: "Expired bootstrap tokens the hub deleted.",
	})
)

func init() { metrics.Registry.MustRegister(joinAttempts, certificatesRenewed, tokensExpired) }
