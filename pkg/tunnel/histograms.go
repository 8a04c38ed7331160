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

package tunnel

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// newFrameSizes returns flotilla_tunnel_frame_size_bytes{stream,direction}: the
// size of each frame sent and received, headers included, from 64 bytes to
// 16 MiB. Its sum is flotilla_tunnel_bytes_total; its buckets show whether a
// few large Works or many heartbeats make the traffic.
func newFrameSizes() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "flotilla_tunnel_frame_size_bytes",
		Help:    "Size of tunnel frames (headers included) sent and received, by stream kind and direction.",
		Buckets: prometheus.ExponentialBuckets(64, 4, 10),
	}, []string{"stream", "direction"})
}

// registerHistogram registers h on reg, or returns the histogram already
// registered under its name.
func registerHistogram(reg prometheus.Registerer, h *prometheus.HistogramVec) (*prometheus.HistogramVec, error) {
	if reg == nil {
		return h, nil
	}
	if err := reg.Register(h); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(*prometheus.HistogramVec); ok {
				return existing, nil
			}
		}
		return nil, fmt.Errorf("failed to register tunnel metrics: %w", err)
	}
	return h, nil
}
