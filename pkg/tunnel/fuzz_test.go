package tunnel

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzDecodeFrame feeds arbitrary bytes to the frame decoder. It must never
// panic or allocate past its limit, and every message it accepts must encode
// again and decode to the same frame.
func FuzzDecodeFrame(f *testing.F) {
	var all []byte
	for _, m := range sampleMessages() {
		frame, err := Encode(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(frame)
		all = append(all, frame...)
	}
	f.Add(all) // several frames back to back
	bad := Header{Version: 2, Type: FrameHello, Length: 2}.Encode()
	f.Add(append(bad[:], "{}"...))
	huge := Header{Version: 1, Type: FrameWorkUpsert, Length: 1 << 30}.Encode()
	f.Add(huge[:])
	f.Add([]byte{})

	const maxFrameSize = 1 << 16
	f.Fuzz(func(t *testing.T, data []byte) {
		fr := NewFrameReader(bytes.NewReader(data), maxFrameSize)
		for {
			h, payload, err := fr.ReadFrame()
			if err != nil {
				if err != io.EOF && !isFrameError(err) {
					t.Fatalf("ReadFrame returned an error that is not a protocol error: %v", err)
				}
				return
			}
			if h.Length > maxFrameSize || uint32(len(payload)) != h.Length {
				t.Fatalf("ReadFrame accepted %s with a %d-byte payload over a %d limit", h, len(payload), maxFrameSize)
			}
			m, err := Decode(h, payload)
			if err != nil {
				if !isFrameError(err) {
					t.Fatalf("Decode(%s) returned an error that is not a protocol error: %v", h, err)
				}
				return
			}
			if m.FrameType() != h.Type {
				t.Fatalf("Decode(%s) returned a %s", h, m.FrameType())
			}
			// What was accepted must survive a round trip.
			frame, err := Encode(m)
			if err != nil {
				// encoding/json accepts some values it cannot write back
				// (e.g. a time beyond year 9999); the decoder still did
				// its job safely.
				return
			}
			var h2 Header
			if err := h2.Decode(frame); err != nil {
				t.Fatalf("re-encoded %s has a bad header: %v", m.FrameType(), err)
			}
			if _, err := Decode(h2, frame[HeaderSize:]); err != nil {
				t.Fatalf("re-encoded %s does not decode: %v\n%s", m.FrameType(), err, frame[HeaderSize:])
			}
		}
	})
}

func isFrameError(err error) bool {
	for _, r := range frameErrorReasons {
		if errors.Is(err, r.err) {
			return true
		}
	}
	return false
}
