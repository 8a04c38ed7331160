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
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	metrics, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	// Registering twice on one registry reuses the collectors (hub and
	// agent in one process).
	again, err := NewMetrics(reg)
	if err != nil {
		t.Fatalf("second NewMetrics: %v", err)
	}
	if again.frames != metrics.frames {
		t.Error("second NewMetrics did not reuse the registered collectors")
	}

	h := startHarness(t, tcpTransport(t), ServerOptions{Metrics: metrics})
	client, server := h.pair("member-1")
	send(t, client.Control(), Heartbeat{Sequence: 1})
	expect(t, server.Control(), Heartbeat{Sequence: 1})

	frames := func(stream, direction, typ string) float64 {
		return testutil.ToFloat64(metrics.frames.WithLabelValues(stream, direction, typ))
	}
	got := map[string]float64{
		"StreamOpen received on Control": frames("Control", "received", "StreamOpen"),
		"StreamOpen received on Work":    frames("Work", "received", "StreamOpen"),
		"StreamOpen received on Status":  frames("Status", "received", "StreamOpen"),
		"Hello received":                 frames("Control", "received", "Hello"),
		"HelloAck sent":                  frames("Control", "sent", "HelloAck"),
		"Heartbeat received":             frames("Control", "received", "Heartbeat"),
		"hub handshakes accepted":        testutil.ToFloat64(metrics.handshakes.WithLabelValues("hub", "accepted")),
	}
	want := map[string]float64{
		"StreamOpen received on Control": 1,
		"StreamOpen received on Work":    1,
		"StreamOpen received on Status":  1,
		"Hello received":                 1,
		"HelloAck sent":                  1,
		"Heartbeat received":             1,
		"hub handshakes accepted":        1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if b := testutil.ToFloat64(metrics.bytes.WithLabelValues("Control", "received")); b <= 0 {
		t.Errorf("bytes received on Control = %v, want > 0", b)
	}

	// A bad frame is counted by reason.
	mux := h.rawClient("member-2")
	hdr := Header{Version: 1, Type: FrameStreamOpen, Length: 1 << 30}.Encode()
	writeRaw(t, openRaw(t, mux), hdr[:])
	if err := h.nextError(); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("ServeConn = %v, want ErrFrameTooLarge", err)
	}
	if got := testutil.ToFloat64(metrics.frameErrors.WithLabelValues("frame_too_large")); got != 1 {
		t.Errorf("frame_too_large errors = %v, want 1", got)
	}
	if got := testutil.ToFloat64(metrics.handshakes.WithLabelValues("hub", "failed")); got != 1 {
		t.Errorf("failed hub handshakes = %v, want 1", got)
	}

	// Every series has a bounded label set: no cluster names anywhere.
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == "member-1" || l.GetValue() == "member-2" {
					t.Errorf("%s has a cluster name in label %s", f.GetName(), l.GetName())
				}
			}
		}
	}
}

func TestNilMetricsRecordNothing(t *testing.T) {
	var m *Metrics
	m.frame(StreamControl, directionSent, FrameHello, 10)
	m.frameError(ErrFrameTooLarge)
	m.unexpectedStream()
	m.handshake(sideHub, nil)
}

func TestFrameErrorReasonsAreDistinct(t *testing.T) {
	seen := map[string]bool{unexpectedStreamReason: true}
	for _, r := range frameErrorReasons {
		if seen[r.reason] {
			t.Errorf("reason %q used twice", r.reason)
		}
		seen[r.reason] = true
	}
	// A stream error is also an invalid message; the specific reason wins.
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.frameError(StreamOpen{Kind: 9}.Validate())
	if got := testutil.ToFloat64(m.frameErrors.WithLabelValues("unknown_stream_kind")); got != 1 {
		t.Errorf("unknown_stream_kind = %v, want 1", got)
	}
	m.frameError(context.Canceled) // not a protocol error
	if got := testutil.CollectAndCount(m.frameErrors); got != 1 {
		t.Errorf("frame error series = %d, want 1", got)
	}
}
