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
