package app

import (
	"runtime/debug"
	"slices"
	"testing"
)

func TestRuntimeDefaultsLeaveWhatTheEnvironmentSets(t *testing.T) {
	limit, gc := debug.SetMemoryLimit(-1), debug.SetGCPercent(-1)
	debug.SetGCPercent(gc)
	t.Cleanup(func() { debug.SetMemoryLimit(limit); debug.SetGCPercent(gc) })
	for _, tc := range []struct {
		name      string
		env       map[string]string
		wantSet   []string
		wantLimit int64
		wantGC    int
	}{
		{"nothing set", nil, []string{"GOMEMLIMIT=24MiB", "GOGC=50"}, DefaultMemoryLimit, DefaultGCPercent},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "64MiB"}, []string{"GOGC=50"}, 77 << 20, DefaultGCPercent},
		{"GOGC set", map[string]string{"GOGC": "100"}, []string{"GOMEMLIMIT=24MiB"}, DefaultMemoryLimit, 77},
		{"both set", map[string]string{"GOMEMLIMIT": "off", "GOGC": "off"}, nil, 77 << 20, 77},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// 77 marks "left as it was".
			debug.SetMemoryLimit(77 << 20)
			debug.SetGCPercent(77)
			set := runtimeDefaults(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if !slices.Equal(set, tc.wantSet) {
				t.Errorf("set %v, want %v", set, tc.wantSet)
			}
			if got := debug.SetMemoryLimit(-1); got != tc.wantLimit {
				t.Errorf("memory limit %d, want %d", got, tc.wantLimit)
			}
			if got := debug.SetGCPercent(77); got != tc.wantGC {
				t.Errorf("GC percent %d, want %d", got, tc.wantGC)
			}
		})
	}
}
