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
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

// Every frame counted in flotilla_tunnel_bytes_total is also observed by
// size, and the histogram reuses the registered one like the counters.
func TestFrameSizesAddUpToTheBytes(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	metrics, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := NewMetrics(reg); err != nil || again.frameSizes != metrics.frameSizes {
		t.Fatalf("second NewMetrics = %v; reused the frame size histogram: %v", err, again != nil && again.frameSizes == metrics.frameSizes)
	}
	h := startHarness(t, tcpTransport(t), ServerOptions{Metrics: metrics})
	client, server := h.pair("member-1")
	send(t, client.Control(), Heartbeat{Sequence: 1})
	expect(t, server.Control(), Heartbeat{Sequence: 1})

	m := &dto.Metric{}
	if err := metrics.frameSizes.WithLabelValues("Control", "received").(prometheus.Histogram).Write(m); err != nil {
		t.Fatal(err)
	}
	frames := testutil.ToFloat64(metrics.frames.WithLabelValues("Control", "received", "StreamOpen")) +
		testutil.ToFloat64(metrics.frames.WithLabelValues("Control", "received", "Hello")) +
		testutil.ToFloat64(metrics.frames.WithLabelValues("Control", "received", "Heartbeat"))
	if got := float64(m.GetHistogram().GetSampleCount()); got != frames {
		t.Errorf("frame sizes observed on Control, received: %v, want %v (the frames counted)", got, frames)
	}
	if got, want := m.GetHistogram().GetSampleSum(), testutil.ToFloat64(metrics.bytes.WithLabelValues("Control", "received")); got != want {
		t.Errorf("sum of frame sizes = %v, want flotilla_tunnel_bytes_total %v", got, want)
	}
}
