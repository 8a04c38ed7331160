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
	if o.Workers.Membership != 4 {
		t.Errorf("membership workers default to %d, want 4", o.Workers.Membership)
	}
}
