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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sampleMessages has one message of every frame type, with every field set.
func sampleMessages() []Message {
	sentAt := time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.UTC)
	return []Message{
		StreamOpen{Kind: StreamWork},
		Hello{ProtocolVersion: ProtocolVersion, AgentVersion: "v0.1.0", ClusterName: "member-1", MaxFrameSize: 1 << 20},
		Hello{ProtocolVersion: ProtocolVersion, AgentVersion: "v0.2.0", ClusterName: "member-1", Capabilities: []string{CapabilityVersionSkew, "unknown"}},
		HelloAck{Accepted: true, HeartbeatPeriodSeconds: 10, HubReplica: "hub-0", MaxFrameSize: 2 << 20},
		HelloAck{Accepted: true, HubVersion: "v0.2.0", Capabilities: []string{CapabilityVersionSkew}},
		Heartbeat{Sequence: 42, SentAt: sentAt, Properties: ClusterProperties{
			NodeCount:         3,
			KubernetesVersion: "v1.37.1",
			Provider:          "kwok",
			Capacity:          map[string]string{"cpu": "12", "memory": "24Gi"},
			Allocatable:       map[string]string{"cpu": "11500m", "memory": "23Gi"},
			Available:         map[string]string{"cpu": "4", "memory": "8Gi", "pods": "300"},
			APIServerHealthy:  false,
			APIServerMessage:  "readyz: etcd not ready",
		}},
		HeartbeatAck{Sequence: 42},
		Goodbye{Reason: "hub replica shutting down"},
		WorkInventory{Items: []WorkRef{
			{Name: "crp-web-member-1", Namespace: "flotilla-member-member-1", Hash: "sha256:aa"},
			{Name: "crp-db-member-1", Namespace: "flotilla-member-member-1", Hash: "sha256:bb"},
		}},
		WorkUpsert{Name: "crp-web-member-1", Hash: "sha256:cc", Work: json.RawMessage(`{"apiVersion":"placement.flotilla.io/v1beta1","kind":"Work","metadata":{"name":"crp-web-member-1"}}`)},
		WorkDelete{Name: "crp-db-member-1"},
		WorkSyncDone{},
		StatusReport{WorkName: "crp-web-member-1", Hash: "sha256:cc", Status: json.RawMessage(`{"conditions":[{"type":"Applied","status":"True"}]}`)},
		Upsync{WorkName: "crp-web-work", Object: json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"born","namespace":"app"}}`)},
		Upsync{WorkName: "crp-web-work", Deleted: &UpsyncRef{Version: "v1", Kind: "ConfigMap", Namespace: "app", Name: "born"}},
		Upsync{WorkName: "crp-web-work", Complete: true, Present: []UpsyncRef{{Version: "v1", Kind: "ConfigMap", Namespace: "app", Name: "born"}}, Problems: []string{"Widget.example.com: not served"}},
	}
}

func TestSampleMessagesCoverEveryFrameType(t *testing.T) {
	seen := map[FrameType]bool{}
	for _, m := range sampleMessages() {
		seen[m.FrameType()] = true
	}
	for ft := range frameSpecs {
		if !seen[ft] {
			t.Errorf("sampleMessages has no %s", ft)
		}
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		header Header
		wire   []byte
		str    string
	}{
		{
			name:   "hello",
			header: Header{Version: 1, Type: FrameHello, Length: 42},
			wire:   []byte{0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2a},
			str:    "Version:1 Type:Hello Flags:0x0000 Length:42",
		},
		{
			name:   "every field at its maximum",
			header: Header{Version: 0xff, Type: 0xff, Flags: 0xffff, Length: 0xffffffff},
			wire:   []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
			str:    "Version:255 Type:FrameType(255) Flags:0xffff Length:4294967295",
		},
		{
			name:   "big-endian fields",
			header: Header{Version: 1, Type: FrameStatusReport, Flags: 0x0102, Length: 0x01020304},
			wire:   []byte{0x01, 0x20, 0x01, 0x02, 0x01, 0x02, 0x03, 0x04},
			str:    "Version:1 Type:StatusReport Flags:0x0102 Length:16909060",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wire := tt.header.Encode()
			if diff := cmp.Diff(tt.wire, wire[:]); diff != "" {
				t.Errorf("Encode (-want +got):\n%s", diff)
			}
			var got Header
			if err := got.Decode(wire[:]); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(tt.header, got); diff != "" {
				t.Errorf("Decode (-want +got):\n%s", diff)
			}
			if got := tt.header.String(); got != tt.str {
				t.Errorf("String() = %q, want %q", got, tt.str)
			}
		})
	}
}

func TestHeaderDecodeShort(t *testing.T) {
	var h Header
	if err := h.Decode(make([]byte, HeaderSize-1)); !errors.Is(err, ErrShortHeader) {
		t.Errorf("Decode(7 bytes) = %v, want ErrShortHeader", err)
	}
}

func TestMessageRoundTrip(t *testing.T) {
	for _, m := range sampleMessages() {
		t.Run(m.FrameType().String(), func(t *testing.T) {
			frame, err := Encode(m)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			var h Header
			if err := h.Decode(frame); err != nil {
				t.Fatalf("Decode header: %v", err)
			}
			wantHeader := Header{Version: ProtocolVersion, Type: m.FrameType(), Length: uint32(len(frame) - HeaderSize)}
			if diff := cmp.Diff(wantHeader, h); diff != "" {
				t.Errorf("header (-want +got):\n%s", diff)
			}
			got, err := Decode(h, frame[HeaderSize:])
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(m, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}

			// The same through a FrameWriter and FrameReader.
			var buf bytes.Buffer
			n, err := NewFrameWriter(&buf, 0).WriteMessage(m)
			if err != nil || n != len(frame) {
				t.Fatalf("WriteMessage = %d, %v; want %d, nil", n, err, len(frame))
			}
			got, err = NewFrameReader(&buf, 0).ReadMessage()
			if err != nil {
				t.Fatalf("ReadMessage: %v", err)
			}
			if diff := cmp.Diff(m, got); diff != "" {
				t.Errorf("stream round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMessageJSONFieldNames(t *testing.T) {
	// The JSON names are part of the protocol; spec.md lists them.
	tests := []struct {
		msg  Message
		want string
	}{
		{StreamOpen{Kind: StreamStatus}, `{"kind":3}`},
		{Hello{ProtocolVersion: 1, AgentVersion: "v1", ClusterName: "c", MaxFrameSize: 5}, `{"protocolVersion":1,"agentVersion":"v1","clusterName":"c","maxFrameSize":5}`},
		{HelloAck{Accepted: false, Reason: "no"}, `{"accepted":false,"reason":"no"}`},
		{HelloAck{Accepted: true, HeartbeatPeriodSeconds: 10, HubReplica: "h", MaxFrameSize: 7}, `{"accepted":true,"heartbeatPeriodSeconds":10,"hubReplica":"h","maxFrameSize":7}`},
		{Heartbeat{Sequence: 1, SentAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Properties: ClusterProperties{NodeCount: 2, KubernetesVersion: "v1.37.1", Provider: "kwok", Capacity: map[string]string{"cpu": "4"}, Allocatable: map[string]string{"cpu": "3"}, Available: map[string]string{"cpu": "1"}, APIServerHealthy: true, APIServerMessage: "ok"}},
			`{"sequence":1,"sentAt":"2026-01-02T03:04:05Z","properties":{"nodeCount":2,"kubernetesVersion":"v1.37.1","provider":"kwok","capacity":{"cpu":"4"},"allocatable":{"cpu":"3"},"available":{"cpu":"1"},"apiServerHealthy":true,"apiServerMessage":"ok"}}`},
		{HeartbeatAck{Sequence: 1}, `{"sequence":1}`},
		{Goodbye{Reason: "bye"}, `{"reason":"bye"}`},
		{WorkInventory{Items: []WorkRef{{Name: "w", Namespace: "ns", Hash: "h"}}}, `{"items":[{"name":"w","namespace":"ns","hash":"h"}]}`},
		{WorkInventory{}, `{"items":null}`},
		{WorkUpsert{Name: "w", Hash: "h", Work: json.RawMessage(`{"kind":"Work"}`)}, `{"name":"w","hash":"h","work":{"kind":"Work"}}`},
		{WorkDelete{Name: "w"}, `{"name":"w"}`},
		{WorkSyncDone{}, `{}`},
		{StatusReport{WorkName: "w", Hash: "h", Status: json.RawMessage(`{}`)}, `{"workName":"w","hash":"h","status":{}}`},
		{StatusReport{WorkName: "w", Removed: true}, `{"workName":"w","hash":"","removed":true}`},
		{StatusReport{WorkName: "w", Removed: true, Released: []string{"Namespace a was kept"}}, `{"workName":"w","hash":"","removed":true,"released":["Namespace a was kept"]}`},
		{Upsync{WorkName: "w", Object: json.RawMessage(`{"kind":"ConfigMap"}`)}, `{"workName":"w","object":{"kind":"ConfigMap"}}`},
		{Upsync{WorkName: "w", Deleted: &UpsyncRef{Version: "v1", Kind: "ConfigMap", Name: "x"}}, `{"workName":"w","deleted":{"version":"v1","kind":"ConfigMap","name":"x"}}`},
		{Upsync{WorkName: "w", Complete: true, Problems: []string{"p"}}, `{"workName":"w","complete":true,"problems":["p"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.msg.FrameType().String(), func(t *testing.T) {
			frame, err := Encode(tt.msg)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if got := string(frame[HeaderSize:]); got != tt.want {
				t.Errorf("payload\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	tests := []struct {
		name    string
		header  Header
		payload string
		wantErr error
	}{
		{"wrong version", Header{Version: 2, Type: FrameHello, Length: 2}, `{}`, ErrUnsupportedVersion},
		{"version zero", Header{Version: 0, Type: FrameHello, Length: 2}, `{}`, ErrUnsupportedVersion},
		{"unknown type", Header{Version: 1, Type: 0x7f, Length: 2}, `{}`, ErrUnknownFrameType},
		{"type zero", Header{Version: 1, Type: 0, Length: 2}, `{}`, ErrUnknownFrameType},
		{"payload shorter than length", Header{Version: 1, Type: FrameGoodbye, Length: 10}, `{}`, ErrTruncatedFrame},
		{"payload longer than length", Header{Version: 1, Type: FrameGoodbye, Length: 1}, `{}`, ErrTruncatedFrame},
		{"not JSON", Header{Version: 1, Type: FrameGoodbye, Length: 5}, `{nope`, ErrMalformedPayload},
		{"JSON of the wrong shape", Header{Version: 1, Type: FrameHeartbeatAck, Length: 18}, `{"sequence":"one"}`, ErrMalformedPayload},
		{"trailing data", Header{Version: 1, Type: FrameGoodbye, Length: 4}, `{}{}`, ErrMalformedPayload},
		{"hello without cluster name", Header{Version: 1, Type: FrameHello, Length: 21}, `{"protocolVersion":1}`, ErrInvalidMessage},
		{"unknown stream kind", Header{Version: 1, Type: FrameStreamOpen, Length: 10}, `{"kind":9}`, ErrUnknownStreamKind},
		{"stream kind zero", Header{Version: 1, Type: FrameStreamOpen, Length: 2}, `{}`, ErrInvalidMessage},
		{"upsert without work", Header{Version: 1, Type: FrameWorkUpsert, Length: 23}, `{"name":"w","hash":"h"}`, ErrInvalidMessage},
		{"upsert with null work", Header{Version: 1, Type: FrameWorkUpsert, Length: 35}, `{"name":"w","hash":"h","work":null}`, ErrInvalidMessage},
		{"delete without name", Header{Version: 1, Type: FrameWorkDelete, Length: 2}, `{}`, ErrInvalidMessage},
		{"inventory item without name", Header{Version: 1, Type: FrameWorkInventory, Length: 24}, `{"items":[{"hash":"h"}]}`, ErrInvalidMessage},
		{"status without work name", Header{Version: 1, Type: FrameStatusReport, Length: 2}, `{}`, ErrInvalidMessage},
		{"upsync without work name", Header{Version: 1, Type: FrameUpsync, Length: 17}, `{"complete":true}`, ErrInvalidMessage},
		{"upsync with nothing", Header{Version: 1, Type: FrameUpsync, Length: 16}, `{"workName":"w"}`, ErrInvalidMessage},
		{"upsync with object and complete", Header{Version: 1, Type: FrameUpsync, Length: 44}, `{"workName":"w","object":{},"complete":true}`, ErrInvalidMessage},
		{"upsync deletion without name", Header{Version: 1, Type: FrameUpsync, Length: 56}, `{"workName":"w","deleted":{"version":"v1","kind":"Pod"}}`, ErrInvalidMessage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.header.Length != uint32(len(tt.payload)) && !errors.Is(tt.wantErr, ErrTruncatedFrame) {
				t.Fatalf("test case header length %d != payload length %d", tt.header.Length, len(tt.payload))
			}
			m, err := Decode(tt.header, []byte(tt.payload))
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("Decode = %v, %v; want error %v", m, err, tt.wantErr)
			}
		})
	}
}

func TestDecodeIgnoresUnknownFields(t *testing.T) {
	payload := `{"sequence":7,"addedInALaterVersion":{"x":1}}`
	m, err := Decode(Header{Version: 1, Type: FrameHeartbeatAck, Length: uint32(len(payload))}, []byte(payload))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if diff := cmp.Diff(Message(HeartbeatAck{Sequence: 7}), m); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDecodeEmptyPayloadIsZeroMessage(t *testing.T) {
	m, err := Decode(Header{Version: 1, Type: FrameWorkSyncDone}, nil)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if diff := cmp.Diff(Message(WorkSyncDone{}), m); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestEncodeRejects(t *testing.T) {
	tests := []struct {
		name    string
		msg     Message
		wantErr error
	}{
		{"nil", nil, ErrInvalidMessage},
		{"invalid message", WorkDelete{}, ErrInvalidMessage},
		{"unknown stream kind", StreamOpen{Kind: 7}, ErrUnknownStreamKind},
		{"message type this version does not define", futureMessage{}, ErrUnknownFrameType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Encode(tt.msg); !errors.Is(err, tt.wantErr) {
				t.Errorf("Encode = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

type futureMessage struct{}

func (futureMessage) FrameType() FrameType { return 0x40 }

func TestFrameReaderRejectsOversizeFrameWithoutAllocating(t *testing.T) {
	hdr := Header{Version: ProtocolVersion, Type: FrameWorkUpsert, Length: 1 << 30}.Encode()
	r := bytes.NewReader(append(hdr[:], "more bytes that must stay unread"...))
	fr := NewFrameReader(r, 0)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, payload, err := fr.ReadFrame()
	runtime.ReadMemStats(&after)

	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("ReadFrame = %v, want ErrFrameTooLarge", err)
	}
	if payload != nil {
		t.Errorf("ReadFrame returned a %d-byte payload", len(payload))
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 64<<10 {
		t.Errorf("ReadFrame allocated %d bytes rejecting a 1 GiB frame", allocated)
	}
	if got, want := r.Len(), len("more bytes that must stay unread"); got != want {
		t.Errorf("ReadFrame consumed the payload: %d bytes left, want %d", got, want)
	}
}

func TestFrameReaderLimits(t *testing.T) {
	tests := []struct {
		configured uint32
		want       uint32
	}{
		{0, DefaultMaxFrameSize},
		{1024, 1024},
		{MaxFrameSizeLimit, MaxFrameSizeLimit},
		{MaxFrameSizeLimit + 1, MaxFrameSizeLimit},
		{1 << 31, MaxFrameSizeLimit},
	}
	for _, tt := range tests {
		if got := NewFrameReader(nil, tt.configured).MaxFrameSize(); got != tt.want {
			t.Errorf("NewFrameReader(max %d).MaxFrameSize() = %d, want %d", tt.configured, got, tt.want)
		}
		if got := NewFrameWriter(nil, tt.configured).MaxFrameSize(); got != tt.want {
			t.Errorf("NewFrameWriter(max %d).MaxFrameSize() = %d, want %d", tt.configured, got, tt.want)
		}
	}

	// A frame exactly at the limit is read; one byte more is not.
	goodbye := func(size int) []byte {
		frame, err := Encode(Goodbye{Reason: string(bytes.Repeat([]byte("x"), size-len(`{"reason":""}`)))})
		if err != nil {
			t.Fatal(err)
		}
		return frame
	}
	if _, err := NewFrameReader(bytes.NewReader(goodbye(100)), 100).ReadMessage(); err != nil {
		t.Errorf("frame at the limit: %v", err)
	}
	if _, err := NewFrameReader(bytes.NewReader(goodbye(101)), 100).ReadMessage(); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("frame over the limit: %v, want ErrFrameTooLarge", err)
	}
}

func TestFrameReaderErrors(t *testing.T) {
	valid, err := Encode(Goodbye{Reason: "bye"})
	if err != nil {
		t.Fatal(err)
	}
	withHeader := func(h Header, rest string) []byte {
		b := h.Encode()
		return append(b[:], rest...)
	}
	tests := []struct {
		name    string
		input   []byte
		wantErr error
	}{
		{"clean end between frames", nil, io.EOF},
		{"end inside the header", valid[:5], ErrShortHeader},
		{"end inside the payload", valid[:len(valid)-1], ErrTruncatedFrame},
		{"wrong version", withHeader(Header{Version: 2, Type: FrameGoodbye, Length: 2}, "{}"), ErrUnsupportedVersion},
		{"unknown type", withHeader(Header{Version: 1, Type: 0x99, Length: 2}, "{}"), ErrUnknownFrameType},
		{"oversize", withHeader(Header{Version: 1, Type: FrameGoodbye, Length: DefaultMaxFrameSize + 1}, "{}"), ErrFrameTooLarge},
		{"malformed payload", withHeader(Header{Version: 1, Type: FrameGoodbye, Length: 2}, "[]"), ErrMalformedPayload},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := NewFrameReader(bytes.NewReader(tt.input), 0).ReadMessage()
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("ReadMessage = %v, %v; want error %v", m, err, tt.wantErr)
			}
		})
	}
	// Short reads are a property of the stream, not an error.
	m, err := NewFrameReader(&oneByteReader{r: bytes.NewReader(valid)}, 0).ReadMessage()
	if err != nil {
		t.Fatalf("ReadMessage one byte at a time: %v", err)
	}
	if diff := cmp.Diff(Message(Goodbye{Reason: "bye"}), m); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

type oneByteReader struct{ r io.Reader }

func (o *oneByteReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

func TestFrameWriterRefusesFramesOverItsLimitWithoutWriting(t *testing.T) {
	var buf bytes.Buffer
	fw := NewFrameWriter(&buf, 0)
	fw.SetMaxFrameSize(16)
	n, err := fw.WriteMessage(Goodbye{Reason: "this reason is longer than sixteen bytes"})
	if !errors.Is(err, ErrFrameTooLarge) || n != 0 {
		t.Errorf("WriteMessage = %d, %v; want 0, ErrFrameTooLarge", n, err)
	}
	if buf.Len() != 0 {
		t.Errorf("WriteMessage wrote %d bytes of a refused frame", buf.Len())
	}
}

// chunkyWriter writes a few bytes at a time and yields in between, so that
// unsynchronised writers would interleave their frames.
type chunkyWriter struct {
	mu  sync.Mutex // guards buf only; FrameWriter must order whole frames
	buf bytes.Buffer
}

func (c *chunkyWriter) Write(p []byte) (int, error) {
	for i := 0; i < len(p); i += 3 {
		c.mu.Lock()
		c.buf.Write(p[i:min(i+3, len(p))])
		c.mu.Unlock()
		runtime.Gosched()
	}
	return len(p), nil
}

func TestFrameWriterConcurrentWritersProduceIntactFrames(t *testing.T) {
	const writers, perWriter = 8, 50
	w := &chunkyWriter{}
	fw := NewFrameWriter(w, 0)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			for seq := range perWriter {
				m := StatusReport{WorkName: fmt.Sprintf("writer-%d", i), Hash: fmt.Sprint(seq), Status: json.RawMessage(`{"padding":"` + string(bytes.Repeat([]byte{'a' + byte(i)}, 40+i)) + `"}`)}
				if _, err := fw.WriteMessage(m); err != nil {
					t.Errorf("WriteMessage: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()

	fr := NewFrameReader(&w.buf, 0)
	next := map[string]int{}
	for {
		m, err := fr.ReadMessage()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("frame %d: %v", len(next), err)
		}
		r := m.(StatusReport)
		if got, want := r.Hash, fmt.Sprint(next[r.WorkName]); got != want {
			t.Errorf("%s: frame %s out of order, want %s", r.WorkName, got, want)
		}
		next[r.WorkName]++
	}
	for i := range writers {
		if got := next[fmt.Sprintf("writer-%d", i)]; got != perWriter {
			t.Errorf("writer-%d: read %d frames, want %d", i, got, perWriter)
		}
	}
}
