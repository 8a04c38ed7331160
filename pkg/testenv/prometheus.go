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

package testenv

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/pkg/poll"
)

// PrometheusScrapeInterval is how often the Prometheus of StartPrometheus
// scrapes its targets.
const PrometheusScrapeInterval = time.Second

// StartPrometheus starts the prometheus binary on PATH (Debian's package: make
// prometheus installs it) on a free local port, with its own config and storage
// in temporary folders, scraping the targets (host:port, path /metrics) every
// PrometheusScrapeInterval, and returns its base URL once it is ready. It stops
// when the test ends. A machine without prometheus fails the test, saying to run
// make prometheus.
func StartPrometheus(t testing.TB, targets ...string) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("prometheus is not on PATH: run make prometheus (it installs Debian's prometheus package)")
	}
	dir := t.TempDir()
	quoted := make([]string, 0, len(targets))
	for _, tg := range targets {
		quoted = append(quoted, fmt.Sprintf("%q", tg))
	}
	config := fmt.Sprintf(`global:
  scrape_interval: %s
  evaluation_interval: %s
scrape_configs:
- job_name: flotilla-test
  static_configs:
  - targets: [%s]
`, PrometheusScrapeInterval, PrometheusScrapeInterval, strings.Join(quoted, ", "))
	configFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configFile, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeLocalAddress(t)
	logFile, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin,
		"--config.file="+configFile,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn",
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("failed to start prometheus: %v", err)
	}
	// exited is closed when the process has exited, with waitErr set.
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		_ = logFile.Close()
		if t.Failed() {
			if out, err := os.ReadFile(logFile.Name()); err == nil && len(out) > 0 {
				t.Logf("prometheus log:\n%s", out)
			}
		}
	})
	url := "http://" + addr
	poll.Eventually(t, 60*time.Second, 100*time.Millisecond, func() error {
		select {
		case <-exited:
			out, _ := os.ReadFile(logFile.Name())
			t.Fatalf("prometheus exited (%v):\n%s", waitErr, out)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/-/ready", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("prometheus at %s is not ready: %w", url, err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("prometheus at %s is not ready: %s", url, resp.Status)
		}
		return nil
	})
	return url
}

// freeLocalAddress returns a 127.0.0.1 address with a port free a moment ago.
func freeLocalAddress(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}
