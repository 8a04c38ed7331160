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
	"context"
	"errors"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/yamux"
)

// heapInUse returns the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// flood opens streams on a yamux client over conn and writes junk into each
// one but the first three as fast as the hub lets it, until ctx ends. It
// stands for a hostile peer: the hub waits for the StreamOpen of the first
// streams, which never comes, while the others pile up data.
func flood(ctx context.Context, conn net.Conn, streams int, junk []byte) {
	cfg := yamux.DefaultConfig()
	cfg.LogOutput = nil
	cfg.Logger = yamuxLogger{}
	cfg.StreamOpenTimeout = 0
	mux, err := yamux.Client(conn, cfg)
	if err != nil {
		return
	}
	defer mux.Close()
	var wg sync.WaitGroup
	for i := range streams {
		st, err := mux.OpenStream()
		if err != nil {
			break
		}
		if i < len(streamKinds) {
			continue
		}
		_ = st.SetWriteDeadline(time.Now().Add(2 * time.Second))
		wg.Go(func() {
			for ctx.Err() == nil {
				if _, err := st.Write(junk); err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
}

// Eight peers that never authenticate each open 250 streams and write as much
// as yamux lets them; the hub's heap stays bounded (HandshakeMaxFrameSize,
// the accept backlog and the stream window), and every connection is closed
// by the handshake deadline.
func TestUnauthenticatedFloodKeepsTheHubHeapBounded(t *testing.T) {
	const conns, streams = 8, 250
	const bound = 24 << 20
	before := heapInUse()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	junk := bytes.Repeat([]byte{0xff}, 32<<10)

	var wg sync.WaitGroup
	var peak uint64
	var peakMu sync.Mutex
	errs := make(chan error, conns)
	for range conns {
		server, client := net.Pipe()
		wg.Go(func() {
			_, err := ServeConn(ctx, server, ServerOptions{HandshakeTimeout: 2 * time.Second})
			errs <- err
		})
		wg.Go(func() { flood(ctx, client, streams, junk) })
	}
	// Sample the heap while the flood runs.
	sample := time.NewTicker(100 * time.Millisecond)
	defer sample.Stop()
	for ctx.Err() == nil {
		select {
		case <-sample.C:
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peakMu.Lock()
			peak = max(peak, ms.HeapInuse)
			peakMu.Unlock()
		case <-ctx.Done():
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err == nil {
			t.Error("a hostile peer established a session")
		}
	}
	after := heapInUse()
	growth := int64(peak) - int64(before)
	t.Logf("heap in use: before %d KiB, peak %d KiB (+%d KiB), after %d KiB", before>>10, peak>>10, growth>>10, after>>10)
	if growth > bound {
		t.Errorf("the flood grew the hub's heap by %d MiB, want at most %d MiB", growth>>20, bound>>20)
	}
}

// Eight authenticated agents that, once established, open 250 more streams
// each and write into them: each session is closed at its first extra
// stream, and the heap stays bounded.
func TestAuthenticatedStreamFloodClosesTheSessionAndKeepsTheHeapBounded(t *testing.T) {
	const conns, streams = 8, 250
	const bound = 24 << 20
	h := startHarness(t, transport{name: "pipe", listen: listenPipe}, ServerOptions{})
	before := heapInUse()
	junk := bytes.Repeat([]byte{0xff}, 32<<10)
	var peak uint64
	for range conns {
		client, server := h.pair("member-1")
		var wg sync.WaitGroup
		for range streams {
			st, err := client.mux.OpenStream()
			if err != nil {
				break
			}
			_ = st.SetWriteDeadline(time.Now().Add(time.Second))
			wg.Go(func() {
				for {
					if _, err := st.Write(junk); err != nil {
						return
					}
				}
			})
		}
		waitClosed(t, server.CloseChan(), "the hub's session")
		if err := server.Err(); !errors.Is(err, ErrUnexpectedStream) {
			t.Errorf("hub Err() = %v, want ErrUnexpectedStream", err)
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
		wg.Wait()
	}
	growth := int64(peak) - int64(before)
	t.Logf("heap in use: before %d KiB, peak %d KiB (+%d KiB)", before>>10, peak>>10, growth>>10)
	if growth > bound {
		t.Errorf("the flood grew the hub's heap by %d MiB, want at most %d MiB", growth>>20, bound>>20)
	}
}

// Until the hello is accepted a frame may be at most HandshakeMaxFrameSize;
// a misplaced frame is refused at its header, before its payload arrives.
func TestHandshakeFrameLimitAndHeaderChecks(t *testing.T) {
	t.Run("a large hello is refused at its header", func(t *testing.T) {
		server, client := net.Pipe()
		errc := make(chan error, 1)
		go func() {
			_, err := ServeConn(t.Context(), server, ServerOptions{HandshakeTimeout: 5 * time.Second})
			errc <- err
		}()
		mux, err := yamux.Client(client, quietYamux())
		if err != nil {
			t.Fatal(err)
		}
		defer mux.Close()
		// Every stream is opened before the oversized header is sent: the
		// hub ends the session on that header, and a stream opened after it
		// would fail with "session shutdown".
		var control *yamux.Stream
		for _, kind := range streamKinds {
			st, err := mux.OpenStream()
			if err != nil {
				t.Fatal(err)
			}
			frame, _ := Encode(StreamOpen{Kind: kind})
			if _, err := st.Write(frame); err != nil {
				t.Fatal(err)
			}
			if kind == StreamControl {
				control = st
			}
		}
		// The header alone, announcing a payload just over the limit.
		// yamux may report the session's shutdown from this very write: the
		// hub read the header and ended the session before the write
		// returned. ServeConn's error below is the verdict.
		hdr := Header{Version: ProtocolVersion, Type: FrameHello, Length: HandshakeMaxFrameSize + 1}.Encode()
		if _, err := control.Write(hdr[:]); err != nil && !errors.Is(err, yamux.ErrSessionShutdown) {
			t.Fatal(err)
		}
		select {
		case err := <-errc:
			if !errors.Is(err, ErrFrameTooLarge) {
				t.Errorf("ServeConn = %v, want ErrFrameTooLarge", err)
			}
		case <-time.After(waitTimeout):
			t.Fatal("ServeConn did not return")
		}
	})

	t.Run("a misplaced frame is refused before its payload", func(t *testing.T) {
		h := startHarness(t, transport{name: "pipe", listen: listenPipe}, ServerOptions{})
		client, server := h.pair("member-1")
		// A WorkUpsert header (hub to agent only) sent by the agent on the
		// work stream, with no payload following: the hub must not wait
		// for it.
		hdr := Header{Version: ProtocolVersion, Type: FrameWorkUpsert, Length: 1 << 20}.Encode()
		if _, err := client.Work().ys.Write(hdr[:]); err != nil {
			t.Fatal(err)
		}
		errc := make(chan error, 1)
		go func() {
			_, err := server.Work().Recv()
			errc <- err
		}()
		select {
		case err := <-errc:
			if !errors.Is(err, ErrUnexpectedFrame) {
				t.Errorf("Recv = %v, want ErrUnexpectedFrame", err)
			}
		case <-time.After(waitTimeout):
			t.Fatal("the hub waited for the payload of a misplaced frame")
		}
	})
}

// A header that announces a large payload costs no memory until the bytes
// arrive.
func TestReadPayloadAllocatesAsBytesArrive(t *testing.T) {
	hdr := Header{Version: ProtocolVersion, Type: FrameWorkUpsert, Length: DefaultMaxFrameSize}.Encode()
	data := append(hdr[:], make([]byte, 100)...)
	allocs := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			fr := NewFrameReader(bytes.NewReader(data), DefaultMaxFrameSize)
			if _, _, err := fr.ReadFrame(); !errors.Is(err, ErrTruncatedFrame) {
				b.Fatalf("ReadFrame = %v, want ErrTruncatedFrame", err)
			}
		}
	})
	if per := allocs.AllocedBytesPerOp(); per > 1<<20 {
		t.Errorf("reading a truncated 16 MiB frame allocated %d bytes, want well under 1 MiB", per)
	}
}
