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
