// Package poll waits in tests: it checks a condition until it holds or a
// deadline passes, and never sleeps in the hope that something happened.
package poll

import (
	"testing"
	"time"
)

// Eventually calls check every interval until it returns nil, and fails the
// test with check's last error if it still does not after timeout.
func Eventually(t testing.TB, timeout, interval time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %v", timeout, err)
		}
		time.Sleep(interval)
	}
}

// Consistently calls check every interval for the whole duration and fails
// the test at its first error.
func Consistently(t testing.TB, duration, interval time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(duration)
	for time.Now().Before(deadline) {
		if err := check(); err != nil {
			t.Fatalf("stopped holding: %v", err)
		}
		time.Sleep(interval)
	}
}
