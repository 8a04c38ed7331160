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

// Metric label values. Every label has a small fixed set of values; there is
// deliberately no cluster label, so the series count does not grow with the
// fleet.
const (
	directionSent     = "sent"
	directionReceived = "received"

	handshakeAccepted = "accepted"
	handshakeRefused  = "refused"
	handshakeFailed   = "failed"

	refusedOverCap  = "cap"
	refusedOverRate = "rate"
)

// frameErrorReasons maps the errors counted by
// flotilla_tunnel_frame_errors_total to their reason label.
var frameErrorReasons = []struct {
	err    error
	reason string
}{
	{ErrFrameTooLarge, "frame_too_large"},
	{ErrUnsupportedVersion, "unsupported_version"},
	{ErrUnknownFrameType, "unknown_frame_type"},
	{ErrUnexpectedFrame, "unexpected_frame"},
	{ErrShortHeader, "short_header"},
	{ErrTruncatedFrame, "truncated_frame"},
	{ErrMalformedPayload, "malformed_payload"},
	// The stream errors are also invalid messages; they come first so that
	// the more specific reason wins.
	{ErrUnknownStreamKind, "unknown_stream_kind"},
	{ErrDuplicateStream, "duplicate_stream"},
	{ErrInvalidMessage, "invalid_message"},
}

// unexpectedStreamReason counts streams a peer may not open
// (ErrUnexpectedStream): one the agent opens after the handshake closes the
// session; an API proxy stream the hub opens without CapabilityAPIProxy is
// closed alone.
const unexpectedStreamReason = "unexpected_stream"

// Metrics holds the tunnel's Prometheus collectors. Create it once per
// process with NewMetrics and pass it in DialOptions or ServerOptions. A nil
// *Metrics records nothing.
type Metrics struct {
	frames      *prometheus.CounterVec
	bytes       *prometheus.CounterVec
	frameErrors *prometheus.CounterVec
	handshakes  *prometheus.CounterVec
	// refusedConns counts connections closed at accept, by reason (over a
	// cap, or faster than Server.Admission paces).
	refusedConns *prometheus.CounterVec
	// frameSizes is flotilla_tunnel_frame_size_bytes (histograms.go).
	frameSizes *prometheus.HistogramVec
}

// NewMetrics creates the tunnel collectors and registers them on reg (the
// hub passes controller-runtime's metrics.Registry). A nil reg leaves them
// unregistered. If they are already registered on reg (for example, hub and
// agent in one test process), the registered collectors are reused.
//
// Collectors:
//
//	flotilla_tunnel_frames_total{stream,direction,type}   frames sent and received
//	flotilla_tunnel_bytes_total{stream,direction}         bytes sent and received, headers included
//	flotilla_tunnel_frame_errors_total{reason}            frames or streams rejected, by reason
//	flotilla_tunnel_handshakes_total{side,result}         session handshakes: accepted, refused, failed
//	flotilla_tunnel_frame_size_bytes{stream,direction}    histogram of frame sizes (histograms.go)
//	flotilla_tunnel_connections_refused_total{reason}     connections closed at accept: over Server's caps ("cap") or its admission rate ("rate")
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		frames: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_tunnel_frames_total",
			Help: "Tunnel frames sent and received, by stream kind, direction and frame type.",
		}, []string{"stream", "direction", "type"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_tunnel_bytes_total",
			Help: "Tunnel frame bytes (headers included) sent and received, by stream kind and direction.",
		}, []string{"stream", "direction"}),
		frameErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_tunnel_frame_errors_total",
			Help: "Tunnel frames or streams rejected as protocol violations, by reason.",
		}, []string{"reason"}),
		handshakes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_tunnel_handshakes_total",
			Help: "Tunnel session handshakes, by side (agent or hub) and result (accepted, refused, failed).",
		}, []string{"side", "result"}),
		refusedConns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flotilla_tunnel_connections_refused_total",
			Help: "Connections the hub closed as soon as it accepted them, by reason: too many connections or handshakes open (cap), or arriving faster than the admission rate (rate).",
		}, []string{"reason"}),
	}
	var err error
	if m.frameSizes, err = registerHistogram(reg, newFrameSizes()); err != nil {
		return nil, err
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []**prometheus.CounterVec{&m.frames, &m.bytes, &m.frameErrors, &m.handshakes, &m.refusedConns} {
		if err := reg.Register(*c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, fmt.Errorf("failed to register tunnel metrics: %w", err)
			}
			existing, ok := are.ExistingCollector.(*prometheus.CounterVec)
			if !ok {
				return nil, fmt.Errorf("failed to register tunnel metrics: %w", err)
			}
			*c = existing
		}
	}
	return m, nil
}

func (m *Metrics) frame(kind StreamKind, direction string, t FrameType, size int) {
	if m == nil {
		return
	}
	m.frames.WithLabelValues(kind.String(), direction, t.String()).Inc()
	m.bytes.WithLabelValues(kind.String(), direction).Add(float64(size))
	m.frameSizes.WithLabelValues(kind.String(), direction).Observe(float64(size))
}

// frameError counts err if it is a protocol violation; connection errors
// (EOF, reset, closed session) are not frame errors.
func (m *Metrics) frameError(err error) {
	if m == nil || err == nil {
		return
	}
	for _, r := range frameErrorReasons {
		if errors.Is(err, r.err) {
			m.frameErrors.WithLabelValues(r.reason).Inc()
			return
		}
	}
}

func (m *Metrics) unexpectedStream() {
	if m == nil {
		return
	}
	m.frameErrors.WithLabelValues(unexpectedStreamReason).Inc()
}

func (m *Metrics) connectionRefused(reason string) {
	if m == nil {
		return
	}
	m.refusedConns.WithLabelValues(reason).Inc()
}

func (m *Metrics) handshake(s side, err error) {
	if m == nil {
		return
	}
	result := handshakeAccepted
	switch {
	case errors.Is(err, ErrRefused):
		result = handshakeRefused
	case err != nil:
		result = handshakeFailed
	}
	m.handshakes.WithLabelValues(s.String(), result).Inc()
}
