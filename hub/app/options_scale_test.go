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

package app

import (
	"strings"
	"testing"
	"time"
)

func TestScaleOptionsAreValidated(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*Options)
		want   string
	}{
		{"the defaults are valid", func(*Options) {}, ""},
		{"pprof on a local address", func(o *Options) { o.PprofBindAddress = "127.0.0.1:6060" }, ""},
		{"pprof on no address", func(o *Options) { o.PprofBindAddress = "localhost" }, "--pprof-bind-address"},
		{"no membership worker", func(o *Options) { o.Workers.Membership = 0 }, "--membership-workers must be at least 1"},
		{"no admission rate", func(o *Options) { o.TunnelAdmissionRate = 0 }, "--tunnel-admission-rate must be positive"},
		{"no admission burst", func(o *Options) { o.TunnelAdmissionBurst = 0 }, "--tunnel-admission-burst at least 1"},
		{"no cache sync time", func(o *Options) { o.CacheSyncTimeout = 0 }, "--cache-sync-timeout must be at least 1s"},
		{"a memory limit in bytes", func(o *Options) { o.MemoryLimit = "2147483648" }, ""},
		{"a memory limit with a suffix", func(o *Options) { o.MemoryLimit = "2Gi" }, ""},
		{"a memory limit that is no quantity", func(o *Options) { o.MemoryLimit = "two gigs" }, "--memory-limit (or $FLOTILLA_MEMORY_LIMIT) \"two gigs\" is not a positive quantity"},
		{"a negative memory limit", func(o *Options) { o.MemoryLimit = "-1Gi" }, "is not a positive quantity"},
		{"a memory ratio above 1", func(o *Options) { o.MemoryLimitRatio = 1.5 }, "--memory-limit-ratio must be from 0 to 1"},
		{"a memory ratio of 0 turns it off", func(o *Options) { o.MemoryLimitRatio = 0 }, ""},
		{"a toleration of 0 moves at once", func(o *Options) { o.DefaultToleration = 0 }, ""},
		{"a sub-second toleration is refused, not read as 0", func(o *Options) { o.DefaultToleration = 500 * time.Millisecond }, "--default-toleration must be a whole number of seconds"},
		{"a toleration of a fraction of seconds is refused", func(o *Options) { o.DefaultToleration = 1500 * time.Millisecond }, "--default-toleration must be a whole number of seconds"},
		{"a graceful timeout of 0 keeps no evicted placement", func(o *Options) { o.EvictionGracefulTimeout = 0 }, ""},
		{"a negative graceful timeout", func(o *Options) { o.EvictionGracefulTimeout = -time.Second }, "--eviction-graceful-timeout must not be negative"},
		{"a disconnect grace of 0 reports at once", func(o *Options) { o.DisconnectGrace = 0 }, ""},
		{"a negative disconnect grace", func(o *Options) { o.DisconnectGrace = -time.Second }, "--disconnect-grace must not be negative"},
		{"a work cleanup timeout of 0 waits for no member", func(o *Options) { o.WorkCleanupTimeout = 0 }, ""},
		{"the API proxy on a port", func(o *Options) { o.ProxyBindAddress = ":8445" }, ""},
		{"the API proxy on no address", func(o *Options) { o.ProxyBindAddress = "8445" }, "--proxy-bind-address"},
		{"no proxied request in flight", func(o *Options) { o.ProxyMaxInflightPerMember = 0 }, "--proxy-max-inflight-per-member must be at least 1"},
		{"a sub-second proxy timeout", func(o *Options) { o.ProxyRequestTimeout = time.Millisecond }, "--proxy-request-timeout must be at least 1s"},
		{"no proxied request in flight for a user", func(o *Options) { o.ProxyMaxInflightPerUser = 0 }, "--proxy-max-inflight-per-user must be at least 1"},
		{"a user rate of zero", func(o *Options) { o.ProxyUserQPS = 0 }, "--proxy-user-qps must be positive"},
		{"a user burst of zero", func(o *Options) { o.ProxyUserBurst = 0 }, "--proxy-user-burst must be at least 1"},
		{"a request cap under 1 KiB", func(o *Options) { o.ProxyMaxRequestBytes = 10 }, "--proxy-max-request-bytes must be at least 1024"},
		{"a response cap under 1 KiB", func(o *Options) { o.ProxyMaxResponseBytes = 0 }, "--proxy-max-response-bytes must be at least 1024"},
		{"a sub-second stream idle timeout", func(o *Options) { o.ProxyStreamIdleTimeout = time.Millisecond }, "--proxy-stream-idle-timeout must be at least 1s"},
		{"a sub-second stream lifetime", func(o *Options) { o.ProxyMaxStreamDuration = 0 }, "--proxy-max-stream-duration must be at least 1s"},
		{"a negative work cleanup timeout", func(o *Options) { o.WorkCleanupTimeout = -time.Second }, "--work-cleanup-timeout must not be negative"},
		{"a negative work report wait", func(o *Options) { o.WorkReportWait = -time.Second }, "--work-report-wait must be between 0"},
		{"a work report wait beyond a minute", func(o *Options) { o.WorkReportWait = 2 * time.Minute }, "--work-report-wait must be between 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			o.ReplicaName = "r"
			tc.mutate(o)
			err := o.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate = %v, want an error naming %q", err, tc.want)
			}
		})
	}
}

func TestScaleOptionDefaults(t *testing.T) {
	o := NewOptions()
	if o.PprofBindAddress != "0" {
		t.Errorf("pprof is served at %q by default, want off (0)", o.PprofBindAddress)
	}
	if o.TunnelAdmissionRate != 50 || o.TunnelAdmissionBurst != 100 {
		t.Errorf("tunnel admission defaults to %g a second after %d, want 50 after 100", o.TunnelAdmissionRate, o.TunnelAdmissionBurst)
	}
	if o.CacheSyncTimeout != 5*time.Minute {
		t.Errorf("cache sync timeout defaults to %s, want 5m", o.CacheSyncTimeout)
	}
	if o.MemoryLimitRatio != 0.9 {
		t.Errorf("memory limit ratio defaults to %g, want 0.9", o.MemoryLimitRatio)
	}
	if o.Workers.Membership != 4 {
		t.Errorf("membership workers default to %d, want 4", o.Workers.Membership)
	}
}

func TestSoftMemoryLimit(t *testing.T) {
	const gi = int64(1) << 30
	for _, tc := range []struct {
		name          string
		container     int64
		ratio         float64
		gomemlimitSet bool
		want          int64
		wantOK        bool
	}{
		{"90 % of a 2 GiB container", 2 * gi, 0.9, false, 1932735283, true},
		{"GOMEMLIMIT wins", 2 * gi, 0.9, true, 0, false},
		{"no container limit known", 0, 0.9, false, 0, false},
		{"a ratio of 0 leaves Go alone", 2 * gi, 0, false, 0, false},
		{"a ratio of 1 is the whole limit", gi, 1, false, gi, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := SoftMemoryLimit(tc.container, tc.ratio, tc.gomemlimitSet)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("SoftMemoryLimit(%d, %g, %t) = %d, %t; want %d, %t", tc.container, tc.ratio, tc.gomemlimitSet, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
