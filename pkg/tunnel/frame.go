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
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// Header is the fixed 8-byte prefix of every frame:
//
//	+---------+--------+----------------+--------------------------------+
//	| version | type   | flags          | length                         |
//	| uint8   | uint8  | uint16         | uint32                         |
//	+---------+--------+----------------+--------------------------------+
//
// Multi-byte fields are big-endian. Length is the size of the JSON payload
// that follows. Flags are reserved: senders set zero, receivers ignore them.
type Header struct {
	Version uint8
	Type    FrameType
	Flags   uint16
	Length  uint32
}

// Encode returns the wire form of h.
func (h Header) Encode() [HeaderSize]byte {
	var b [HeaderSize]byte
	b[0] = h.Version
	b[1] = uint8(h.Type)
	binary.BigEndian.PutUint16(b[2:4], h.Flags)
	binary.BigEndian.PutUint32(b[4:8], h.Length)
	return b
}

// Decode parses the wire form of a header from the first HeaderSize bytes of
// b. It only parses: the version, type and length are checked by
// FrameReader and Decode.
func (h *Header) Decode(b []byte) error {
	if len(b) < HeaderSize {
		return fmt.Errorf("%w: %d of %d bytes", ErrShortHeader, len(b), HeaderSize)
	}
	h.Version = b[0]
	h.Type = FrameType(b[1])
	h.Flags = binary.BigEndian.Uint16(b[2:4])
	h.Length = binary.BigEndian.Uint32(b[4:8])
	return nil
}

func (h Header) String() string {
	return fmt.Sprintf("Version:%d Type:%s Flags:0x%04x Length:%d", h.Version, h.Type, h.Flags, h.Length)
}

// side is a bit set of the ends of a session: the agent (yamux client, which
// dials and opens the streams) and the hub (yamux server).
type side uint8

const (
	sideAgent side = 1 << iota
	sideHub
)

func (s side) String() string {
	switch s {
	case sideAgent:
		return "agent"
	case sideHub:
		return "hub"
	}
	return "agent or hub"
}

// phase is a bit set of the points of a session at which a frame may appear.
type phase uint8

const (
	// phaseHandshake: from the start of a stream until HelloAck.
	phaseHandshake phase = 1 << iota
	// phaseEstablished: after an accepted HelloAck.
	phaseEstablished
)

// frameSpec is one row of the dispatch table: how to decode a frame type and
// where it may appear.
type frameSpec struct {
	decode func(payload []byte) (Message, error)
	// stream is the kind of stream that carries the frame; 0 means any.
	stream StreamKind
	// from is the set of sides that may send the frame.
	from side
	// phases is the set of phases in which the frame may appear.
	phases phase
	// once: the frame may appear at most once per session.
	once bool
}

// frameSpecs is the dispatch table from frame type to message type and the
// rules of where the frame may appear. spec.md has the same table.
var frameSpecs = map[FrameType]frameSpec{
	FrameStreamOpen:    {decode: decodeAs[StreamOpen], stream: 0, from: sideAgent, phases: phaseHandshake},
	FrameHello:         {decode: decodeAs[Hello], stream: StreamControl, from: sideAgent, phases: phaseHandshake},
	FrameHelloAck:      {decode: decodeAs[HelloAck], stream: StreamControl, from: sideHub, phases: phaseHandshake},
	FrameHeartbeat:     {decode: decodeAs[Heartbeat], stream: StreamControl, from: sideAgent, phases: phaseEstablished},
	FrameHeartbeatAck:  {decode: decodeAs[HeartbeatAck], stream: StreamControl, from: sideHub, phases: phaseEstablished},
	FrameGoodbye:       {decode: decodeAs[Goodbye], stream: StreamControl, from: sideAgent | sideHub, phases: phaseHandshake | phaseEstablished},
	FrameWorkInventory: {decode: decodeAs[WorkInventory], stream: StreamWork, from: sideAgent, phases: phaseEstablished, once: true},
	FrameWorkUpsert:    {decode: decodeAs[WorkUpsert], stream: StreamWork, from: sideHub, phases: phaseEstablished},
	FrameWorkDelete:    {decode: decodeAs[WorkDelete], stream: StreamWork, from: sideHub, phases: phaseEstablished},
	FrameWorkSyncDone:  {decode: decodeAs[WorkSyncDone], stream: StreamWork, from: sideHub, phases: phaseEstablished, once: true},
	FrameStatusReport:  {decode: decodeAs[StatusReport], stream: StreamStatus, from: sideAgent, phases: phaseEstablished},
	FrameUpsync:        {decode: decodeAs[Upsync], stream: StreamStatus, from: sideAgent, phases: phaseEstablished},
}

// checkPlacement returns ErrUnexpectedFrame unless a frame of type t may be
// sent by from on a stream of the given kind in the given phase. A stream
// whose kind is not known yet (0) accepts only frames allowed on any stream.
func checkPlacement(t FrameType, kind StreamKind, from side, p phase) error {
	spec, ok := frameSpecs[t]
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownFrameType, t)
	}
	switch {
	case spec.stream != 0 && spec.stream != kind:
		return fmt.Errorf("%w: %s on the %s stream (belongs on the %s stream)", ErrUnexpectedFrame, t, kind, spec.stream)
	case spec.from&from == 0:
		return fmt.Errorf("%w: %s sent by the %s (only the %s sends it)", ErrUnexpectedFrame, t, from, spec.from)
	case spec.phases&p == 0:
		when := "during the handshake"
		if p == phaseEstablished {
			when = "after the handshake"
		}
		return fmt.Errorf("%w: %s %s", ErrUnexpectedFrame, t, when)
	}
	return nil
}

func decodeAs[T Message](payload []byte) (Message, error) {
	var m T
	if len(payload) > 0 {
		if err := json.Unmarshal(payload, &m); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrMalformedPayload, m.FrameType(), err)
		}
	}
	if v, ok := any(m).(validator); ok {
		if err := v.Validate(); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Encode returns the frame for m: its header followed by its JSON payload.
// It refuses a message that fails validation and a payload larger than
// MaxFrameSizeLimit.
func Encode(m Message) ([]byte, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: nil message", ErrInvalidMessage)
	}
	t := m.FrameType()
	if _, ok := frameSpecs[t]; !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownFrameType, t)
	}
	if v, ok := m.(validator); ok {
		if err := v.Validate(); err != nil {
			return nil, err
		}
	}
	payload, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("failed to encode %s: %w", t, err)
	}
	if uint64(len(payload)) > uint64(MaxFrameSizeLimit) {
		return nil, fmt.Errorf("%w: %s payload of %d bytes exceeds the limit of %d", ErrFrameTooLarge, t, len(payload), MaxFrameSizeLimit)
	}
	h := Header{Version: ProtocolVersion, Type: t, Length: uint32(len(payload))}
	frame := make([]byte, HeaderSize+len(payload))
	hb := h.Encode()
	copy(frame, hb[:])
	copy(frame[HeaderSize:], payload)
	return frame, nil
}

// Decode returns the message carried by a frame with header h and the given
// payload. It checks the version, the type, that the payload has h.Length
// bytes, that it is valid JSON for the type, and the message's required
// fields. It does not check where the frame may appear (see spec.md).
func Decode(h Header, payload []byte) (Message, error) {
	if h.Version != ProtocolVersion {
		return nil, fmt.Errorf("%w: %d (this peer speaks %d)", ErrUnsupportedVersion, h.Version, ProtocolVersion)
	}
	spec, ok := frameSpecs[h.Type]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownFrameType, h.Type)
	}
	if uint64(len(payload)) != uint64(h.Length) {
		return nil, fmt.Errorf("%w: %s payload has %d bytes, header says %d", ErrTruncatedFrame, h.Type, len(payload), h.Length)
	}
	return spec.decode(payload)
}

// clampMaxFrameSize applies the default (for 0) and the hard ceiling.
func clampMaxFrameSize(n uint32) uint32 {
	switch {
	case n == 0:
		return DefaultMaxFrameSize
	case n > MaxFrameSizeLimit:
		return MaxFrameSizeLimit
	}
	return n
}

// checkHeader validates a header before its payload is read, so that a bad
// or oversize frame is rejected without reading or allocating the payload.
func checkHeader(h Header, maxFrameSize uint32) error {
	if h.Version != ProtocolVersion {
		return fmt.Errorf("%w: %d (this peer speaks %d)", ErrUnsupportedVersion, h.Version, ProtocolVersion)
	}
	if _, ok := frameSpecs[h.Type]; !ok {
		return fmt.Errorf("%w: %s", ErrUnknownFrameType, h.Type)
	}
	if h.Length > maxFrameSize {
		return fmt.Errorf("%w: %s of %d bytes exceeds the limit of %d", ErrFrameTooLarge, h.Type, h.Length, maxFrameSize)
	}
	return nil
}

// FrameReader reads frames from an io.Reader. It is not safe for concurrent
// use; a stream has one reader.
type FrameReader struct {
	r   io.Reader
	max atomic.Uint32
	hdr [HeaderSize]byte
}

// NewFrameReader returns a FrameReader that rejects payloads larger than
// maxFrameSize (0 means DefaultMaxFrameSize; values above MaxFrameSizeLimit
// are clamped to it).
func NewFrameReader(r io.Reader, maxFrameSize uint32) *FrameReader {
	fr := &FrameReader{r: r}
	fr.max.Store(clampMaxFrameSize(maxFrameSize))
	return fr
}

// MaxFrameSize returns the largest payload the reader accepts.
func (fr *FrameReader) MaxFrameSize() uint32 { return fr.max.Load() }

// SetMaxFrameSize changes the largest payload the reader accepts; a session
// raises it from HandshakeMaxFrameSize once the handshake is over.
func (fr *FrameReader) SetMaxFrameSize(n uint32) { fr.max.Store(clampMaxFrameSize(n)) }

// payloadChunk is how much of a payload the reader allocates before the
// bytes have arrived: a large payload grows with the data actually read, so
// that a header alone (a peer that announces 16 MiB and sends nothing) costs
// no memory.
const payloadChunk = 64 << 10

// ReadHeader reads and checks the next frame header: a wrong version
// (ErrUnsupportedVersion), an unknown type (ErrUnknownFrameType) or a length
// over the limit (ErrFrameTooLarge) is returned before any of the payload is
// read. It returns io.EOF if the reader ends cleanly between frames.
func (fr *FrameReader) ReadHeader() (Header, error) {
	var h Header
	if _, err := io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return h, fmt.Errorf("%w: %w", ErrShortHeader, err)
		}
		return h, err
	}
	if err := h.Decode(fr.hdr[:]); err != nil {
		return h, err
	}
	if err := checkHeader(h, fr.max.Load()); err != nil {
		return h, err
	}
	return h, nil
}

// ReadPayload reads the payload of the frame whose header ReadHeader just
// returned. Memory is allocated as the bytes arrive, in chunks, never from
// the header's length alone.
func (fr *FrameReader) ReadPayload(h Header) ([]byte, error) {
	var payload []byte
	var err error
	if h.Length <= payloadChunk {
		payload = make([]byte, h.Length)
		_, err = io.ReadFull(fr.r, payload)
	} else {
		buf := bytes.NewBuffer(make([]byte, 0, payloadChunk))
		var n int64
		n, err = io.CopyN(buf, fr.r, int64(h.Length))
		if errors.Is(err, io.EOF) && n < int64(h.Length) {
			err = io.ErrUnexpectedEOF
		}
		payload = buf.Bytes()
	}
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: %s: %w", ErrTruncatedFrame, h, io.ErrUnexpectedEOF)
		}
		return nil, fmt.Errorf("failed to read %s payload: %w", h.Type, err)
	}
	return payload, nil
}

// ReadFrame reads one frame: ReadHeader, then ReadPayload. After any error
// other than io.EOF the reader is out of step with the stream and must not
// be used again.
func (fr *FrameReader) ReadFrame() (Header, []byte, error) {
	h, err := fr.ReadHeader()
	if err != nil {
		return h, nil, err
	}
	payload, err := fr.ReadPayload(h)
	if err != nil {
		return h, nil, err
	}
	return h, payload, nil
}

// ReadMessage reads one frame and decodes its message.
func (fr *FrameReader) ReadMessage() (Message, error) {
	h, payload, err := fr.ReadFrame()
	if err != nil {
		return nil, err
	}
	return Decode(h, payload)
}

// FrameWriter writes frames to an io.Writer. It is safe for concurrent use:
// each frame is written whole, under a lock, with a single Write call.
type FrameWriter struct {
	mu  sync.Mutex
	w   io.Writer
	max atomic.Uint32
}

// NewFrameWriter returns a FrameWriter that refuses to send payloads larger
// than maxFrameSize (0 means DefaultMaxFrameSize; values above
// MaxFrameSizeLimit are clamped to it).
func NewFrameWriter(w io.Writer, maxFrameSize uint32) *FrameWriter {
	fw := &FrameWriter{w: w}
	fw.max.Store(clampMaxFrameSize(maxFrameSize))
	return fw
}

// SetMaxFrameSize changes the largest payload the writer sends, typically to
// the limit the peer advertised in Hello or HelloAck.
func (fw *FrameWriter) SetMaxFrameSize(n uint32) { fw.max.Store(clampMaxFrameSize(n)) }

// MaxFrameSize returns the largest payload the writer sends.
func (fw *FrameWriter) MaxFrameSize() uint32 { return fw.max.Load() }

// WriteMessage encodes m and writes it as one frame, returning the number of
// bytes written. A message that cannot be encoded or is larger than the
// limit (ErrFrameTooLarge) is refused before anything is written.
func (fw *FrameWriter) WriteMessage(m Message) (int, error) {
	frame, err := fw.encode(m)
	if err != nil {
		return 0, err
	}
	return fw.writeFrame(frame)
}

func (fw *FrameWriter) encode(m Message) ([]byte, error) {
	frame, err := Encode(m)
	if err != nil {
		return nil, err
	}
	if limit := fw.max.Load(); uint64(len(frame)-HeaderSize) > uint64(limit) {
		return nil, fmt.Errorf("%w: %s payload of %d bytes exceeds the limit of %d", ErrFrameTooLarge, m.FrameType(), len(frame)-HeaderSize, limit)
	}
	return frame, nil
}

func (fw *FrameWriter) writeFrame(frame []byte) (int, error) {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	n, err := fw.w.Write(frame)
	if err == nil && n < len(frame) {
		err = io.ErrShortWrite
	}
	return n, err
}
