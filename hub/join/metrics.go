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
