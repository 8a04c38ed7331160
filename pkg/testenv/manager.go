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
	"testing"
	"time"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/flotilla-io/flotilla/pkg/poll"
)

// StartManager runs a controller-runtime manager against the test API server
// until the test ends: setup registers what it runs. Metrics and health
// endpoints are off, and every test may register controllers of the same names.
func (e *Env) StartManager(t testing.TB, setup func(ctrl.Manager) error) {
	t.Helper()
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{
		Scheme:                 e.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := setup(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

// Eventually polls check until it returns nil, and fails the test with check's
// last error if it still does not after timeout.
func Eventually(t testing.TB, timeout time.Duration, check func() error) {
	t.Helper()
	poll.Eventually(t, timeout, 200*time.Millisecond, check)
}

// Consistently checks that check keeps returning nil for the whole duration,
// failing the test at its first error.
func Consistently(t testing.TB, duration time.Duration, check func() error) {
	t.Helper()
	poll.Consistently(t, duration, 200*time.Millisecond, check)
}
