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
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/yamux"
)

// Stream is one typed stream of a session: it sends and receives whole
// messages. Send is safe for concurrent use; Recv must be called from one
// goroutine at a time.
//
// Errors follow one rule: an error that leaves the stream out of step with
// its peer closes the whole session. That is every Recv error (a bad,
// oversize or misplaced frame, or the connection ending) and every failed
// write. Such errors match ErrSessionClosed and wrap the session's cause
// (Session.Err), e.g. ErrFrameTooLarge. A message that Send refuses before
// writing anything (invalid, too large for the peer, not allowed on this
// stream) returns an error and leaves the session open.
type Stream struct {
	sess *Session
	// kind is set when the stream is opened (agent) or identified by its
	// StreamOpen (hub), before the session is handed to the caller.
	kind StreamKind
	ys   *yamux.Stream
	r    *FrameReader
	w    *FrameWriter
	// recvErr is the sticky error of Recv, and received the frame types
	// seen that may appear only once; only the reading goroutine touches
	// them.
	recvErr  error
	received map[FrameType]bool

	sentMu sync.Mutex
	sent   map[FrameType]bool // frame types sent that may appear only once
}

func newStream(sess *Session, kind StreamKind, ys *yamux.Stream) *Stream {
	return &Stream{
		sess: sess,
		kind: kind,
		ys:   ys,
		// Until the hello is accepted a peer may send only small frames.
		r: NewFrameReader(ys, min(HandshakeMaxFrameSize, clampMaxFrameSize(sess.maxFrameSize))),
		w: NewFrameWriter(ys, DefaultMaxFrameSize),
	}
}

// Kind returns what the stream carries.
func (st *Stream) Kind() StreamKind { return st.kind }

// Send writes m as one frame. It refuses, without closing the session, a
// message that is invalid (ErrInvalidMessage), larger than the peer accepts
// (ErrFrameTooLarge) or not allowed on this stream from this side
// (ErrUnexpectedFrame). A failed write closes the session.
func (st *Stream) Send(m Message) error {
	if m == nil {
		return fmt.Errorf("failed to send on the %s stream: %w: nil message", st.kind, ErrInvalidMessage)
	}
	t := m.FrameType()
	if err := checkPlacement(t, st.kind, st.sess.side, st.sess.phase()); err != nil {
		return fmt.Errorf("failed to send %s on the %s stream: %w", t, st.kind, err)
	}
	frame, err := st.w.encode(m)
	if err != nil {
		return fmt.Errorf("failed to send %s on the %s stream: %w", t, st.kind, err)
	}
	if frameSpecs[t].once && !st.markSent(t) {
		return fmt.Errorf("failed to send %s on the %s stream: %w: a second %s in one session", t, st.kind, ErrUnexpectedFrame, t)
	}
	if st.sess.isClosed() {
		return st.sess.closedError()
	}
	if _, err := st.w.writeFrame(frame); err != nil {
		st.sess.closeWithError(fmt.Errorf("failed to send %s on the %s stream: %w", t, st.kind, err))
		return st.sess.closedError()
	}
	st.sess.metrics.frame(st.kind, directionSent, t, len(frame))
	return nil
}

// Recv reads the next message. It blocks until a frame arrives or the
// session closes. Any error closes the session (see Stream), and Recv keeps
// returning it.
func (st *Stream) Recv() (Message, error) {
	if st.recvErr != nil {
		return nil, st.recvErr
	}
	m, size, err := st.recv()
	if err != nil {
		if !st.sess.isClosed() {
			st.sess.metrics.frameError(err)
		}
		st.sess.closeWithError(fmt.Errorf("failed to receive on the %s stream: %w", st.kind, err))
		st.recvErr = st.sess.closedError()
		return nil, st.recvErr
	}
	kind := st.kind
	if open, ok := m.(StreamOpen); ok && kind == 0 {
		// The hub learns the kind from this frame; count it there.
		kind = open.Kind
	}
	st.sess.metrics.frame(kind, directionReceived, m.FrameType(), size)
	return m, nil
}

func (st *Stream) recv() (Message, int, error) {
	h, err := st.r.ReadHeader()
	if err != nil {
		return nil, 0, err
	}
	// Where the frame may appear is decided by its header: a misplaced
	// frame is refused before its payload is read.
	if err := checkPlacement(h.Type, st.kind, st.sess.side.peer(), st.sess.phase()); err != nil {
		return nil, 0, err
	}
	if frameSpecs[h.Type].once && st.received[h.Type] {
		return nil, 0, fmt.Errorf("%w: a second %s in one session", ErrUnexpectedFrame, h.Type)
	}
	payload, err := st.r.ReadPayload(h)
	if err != nil {
		return nil, 0, err
	}
	m, err := Decode(h, payload)
	if err != nil {
		return nil, 0, err
	}
	if frameSpecs[h.Type].once {
		if st.received == nil {
			st.received = map[FrameType]bool{}
		}
		st.received[h.Type] = true
	}
	return m, HeaderSize + len(payload), nil
}

// markSent records that a frame of type t was sent, reporting false if one
// already was.
func (st *Stream) markSent(t FrameType) bool {
	st.sentMu.Lock()
	defer st.sentMu.Unlock()
	if st.sent[t] {
		return false
	}
	if st.sent == nil {
		st.sent = map[FrameType]bool{}
	}
	st.sent[t] = true
	return true
}

// setWriteDeadline bounds the writes of Send; used for Goodbye.
func (st *Stream) setWriteDeadline(t time.Time) {
	_ = st.ys.SetWriteDeadline(t)
}

func (s side) peer() side {
	if s == sideAgent {
		return sideHub
	}
	return sideAgent
}
