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

package proxy

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/flotilla-io/flotilla/pkg/apiproxy"
)

func TestUserLimits(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	l := newUserLimits(2, 1, 3)

	// Two in flight is the most; a third is refused naming the flag.
	r1, refusal := l.admit("alice", start)
	if refusal != nil {
		t.Fatalf("first request refused: %v", refusal)
	}
	r2, refusal := l.admit("alice", start)
	if refusal != nil {
		t.Fatalf("second request refused: %v", refusal)
	}
	if _, refusal := l.admit("alice", start); refusal == nil || !strings.Contains(refusal.Error(), "--proxy-max-inflight-per-user") {
		t.Errorf("a third request in flight: %v, want a refusal naming --proxy-max-inflight-per-user", refusal)
	}
	// Another user has limits of their own.
	rb, refusal := l.admit("bob", start)
	if refusal != nil {
		t.Errorf("bob refused because of alice: %v", refusal)
	}
	rb()
	r1()
	r2()

	// The burst is 3 and alice spent 2 (the refused one took no token):
	// one more now, then one a second.
	r, refusal := l.admit("alice", start)
	if refusal != nil {
		t.Fatalf("the burst's last token refused: %v", refusal)
	}
	r()
	_, refusal = l.admit("alice", start)
	if refusal == nil || !strings.Contains(refusal.Error(), "--proxy-user-qps") {
		t.Fatalf("over the burst: %v, want a refusal naming --proxy-user-qps", refusal)
	}
	if got := refusal.Status().Details.RetryAfterSeconds; got != 1 {
		t.Errorf("Retry-After %d s, want 1 at 1 request a second", got)
	}
	r, refusal = l.admit("alice", start.Add(time.Second))
	if refusal != nil {
		t.Errorf("a second later: %v, want a token", refusal)
	}
	r()

	// A minute on, both users are idle with full buckets and forgotten.
	if n := l.tracked(); n != 2 {
		t.Fatalf("tracking %d users, want 2", n)
	}
	later := start.Add(2 * time.Minute)
	r, _ = l.admit("carol", later)
	r()
	if n := l.tracked(); n != 1 {
		t.Errorf("after a minute idle: tracking %d users, want 1 (carol)", n)
	}
	// A user with a request in flight is kept however long it runs.
	r, _ = l.admit("dave", later)
	_, _ = l.admit("erin", later.Add(10*time.Minute)) // erin stays in flight
	if n := l.tracked(); n != 2 {
		t.Errorf("tracking %d users, want dave (in flight) and erin", n)
	}
	r()
}

// echoBackend answers with the size of the body it read, or with size
// bytes when the query asks for them.
func echoBackend(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := r.URL.Query().Get("size"); n != "" {
			size, _ := strconv.Atoi(n)
			chunk := strings.Repeat("x", 1024)
			for written := 0; written < size; written += len(chunk) {
				if _, err := io.WriteString(w, chunk); err != nil {
					return
				}
			}
			return
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, strings.Repeat("y", len(b)%7))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRequestAndResponseSizeCaps(t *testing.T) {
	reg := prometheus.NewRegistry()
	h, err := New(Options{Dialer: blockingDialer{echoBackend(t)}, Authenticator: fixedAuth{}, Authorizer: fixedAuth{},
		MaxRequestBytes: 4096, MaxResponseBytes: 64 << 10, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(h)
	defer front.Close()
	url := front.URL + apiproxy.PathPrefix("member-1") + "/api/v1/namespaces/a/configmaps"

	post := func(body io.Reader, length int64) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, url, body)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = length
		resp, err := front.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(strings.NewReader(strings.Repeat("a", 4096)), 4096); code != http.StatusOK {
		t.Errorf("a body at the cap: %d %s, want 200", code, body)
	}
	if code, body := post(strings.NewReader(strings.Repeat("a", 4097)), 4097); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "(4097 bytes)") || !strings.Contains(body, "--proxy-max-request-bytes") {
		t.Errorf("a declared body over the cap: %d %s, want 413 naming its size and the flag", code, body)
	}
	// A chunked body declares no length: it is cut while it is read.
	if code, body := post(io.MultiReader(strings.NewReader(strings.Repeat("a", 8192))), -1); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "--proxy-max-request-bytes") {
		t.Errorf("a chunked body over the cap: %d %s, want 413 naming the flag", code, body)
	}

	get := func(size int) (int, error) {
		resp, err := front.Client().Get(url + "?size=" + strconv.Itoa(size))
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return len(b), err
	}
	if n, err := get(32 << 10); err != nil || n != 32<<10 {
		t.Errorf("a response under the cap: %d bytes, %v; want all 32 KiB", n, err)
	}
	if n, err := get(1 << 20); err == nil || n >= 1<<20 {
		t.Errorf("a response of 1 MiB with a 64 KiB cap: %d bytes, err %v; want it cut", n, err)
	}
	if got := testutil.ToFloat64(h.cuts.WithLabelValues("member-1", cutResponseBytes)); got != 1 {
		t.Errorf("flotilla_proxy_cut_total{reason=response-bytes} = %v, want 1", got)
	}
	// A watch is long-running and not capped.
	resp, err := front.Client().Get(url + "?watch=true&size=" + strconv.Itoa(256<<10))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || len(b) != 256<<10 {
		t.Errorf("a watch past the response cap: %d bytes, %v; want all of it", len(b), err)
	}
}

func TestUserInflightLimitThroughTheHandler(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 4)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
	}))
	defer backend.Close()
	h, err := New(Options{Dialer: blockingDialer{backend}, Authenticator: fixedAuth{}, Authorizer: fixedAuth{}, MaxInflightPerUser: 1})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, apiproxy.PathPrefix("member-1")+"/api?watch=true", nil))
		done <- rec.Code
	}()
	<-arrived
	// alice's one slot is taken, on another member too.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, apiproxy.PathPrefix("member-2")+"/api", nil))
	if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), "--proxy-max-inflight-per-user") || rec.Header().Get("Retry-After") != "1" {
		t.Errorf("a second request of a user with one slot: %d %s (Retry-After %q), want 429 naming the flag with Retry-After 1", rec.Code, rec.Body, rec.Header().Get("Retry-After"))
	}
	close(release)
	if code := <-done; code != http.StatusOK {
		t.Errorf("the first request: %d, want 200", code)
	}
}

func TestGuardedConnClosesAnIdleStream(t *testing.T) {
	cuts := make(chan string, 2)
	a, b := net.Pipe()
	defer b.Close()
	g := guard(a, &streamLimits{idle: 300 * time.Millisecond, lifetime: time.Hour, cut: func(reason string) { cuts <- reason }})

	// Bytes every 100 ms keep it open past the idle timeout.
	go func() { _, _ = io.Copy(io.Discard, b) }()
	for range 6 {
		if _, err := g.Write([]byte("x")); err != nil {
			t.Fatalf("a stream in use was closed: %v", err)
		}
		time.Sleep(100 * time.Millisecond) // the traffic itself, not a wait for a result
	}
	select {
	case r := <-cuts:
		t.Fatalf("a stream in use was cut (%s)", r)
	default:
	}
	// Quiet, it is closed.
	var reason string
	select {
	case reason = <-cuts:
	case <-time.After(10 * time.Second):
		t.Fatal("an idle stream was not cut")
	}
	if reason != cutIdle {
		t.Errorf("cut for %q, want %q", reason, cutIdle)
	}
	if _, err := g.Write([]byte("x")); err == nil {
		t.Error("a cut stream still writes")
	}
}

func TestGuardedConnEndsAtItsLifetime(t *testing.T) {
	cuts := make(chan string, 2)
	a, b := net.Pipe()
	defer b.Close()
	g := guard(a, &streamLimits{idle: time.Hour, lifetime: 200 * time.Millisecond, cut: func(reason string) { cuts <- reason }})
	select {
	case r := <-cuts:
		if r != cutDuration {
			t.Errorf("cut for %q, want %q", r, cutDuration)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a stream was not ended at its lifetime")
	}
	if _, err := g.Read(make([]byte, 1)); err == nil {
		t.Error("an ended stream still reads")
	}
	// Closing it again, as the proxy does, reports nothing more.
	_ = g.Close()
	select {
	case r := <-cuts:
		t.Errorf("a second cut reported: %s", r)
	default:
	}
}
