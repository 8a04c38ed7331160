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
	"github.com/prometheus/client_golang/prometheus"
)

// newSessionSeconds returns flotilla_tunnel_session_duration_seconds: how long
// each agent session held by this replica lasted, observed when it ends, from
// 1s to about 3 days. Short sessions in numbers mean agents that reconnect in a
// loop.
func newSessionSeconds() prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "flotilla_tunnel_session_duration_seconds",
		Help:    "Duration of the agent tunnel sessions held by this hub replica, observed when they end.",
		Buckets: prometheus.ExponentialBuckets(1, 4, 10),
	})
}

// observeSessionEnd records the end of a member's session.
func (s *Server) observeSessionEnd(ms *memberSession) {
	s.metrics.sessionSeconds.Observe(s.now().Sub(ms.since).Seconds())
}
