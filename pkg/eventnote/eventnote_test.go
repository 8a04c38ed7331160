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

package eventnote

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestBound(t *testing.T) {
	for _, tc := range []struct {
		name string
		note string
		// kept is how many bytes of note the bounded note starts with; -1
		// when the note is kept whole.
		kept int
	}{
		{"a short note is kept", "Scheduled is True: picked 3 clusters", -1},
		{"a note of exactly the limit is kept", strings.Repeat("a", MaxLength), -1},
		{"a note one byte over is cut", strings.Repeat("a", MaxLength+1), MaxLength - 24},
		{"a long list of clusters is cut", "RolloutStarted is False: 700 of 700 clusters: " + strings.Repeat("member-0001, ", 700), MaxLength - 24},
		{"a cut never splits a character", strings.Repeat("é", MaxLength), MaxLength - 24},
		{"a cut never splits a four-byte character", "x" + strings.Repeat("🚢", MaxLength), MaxLength - 24 - 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Bound(tc.note)
			if len(got) > MaxLength {
				t.Fatalf("the note is %d bytes, more than %d", len(got), MaxLength)
			}
			if !utf8.ValidString(got) {
				t.Fatalf("the note is not valid UTF-8: %q", got[len(got)-40:])
			}
			if tc.kept < 0 {
				if got != tc.note {
					t.Fatalf("the note changed: %q", got)
				}
				return
			}
			kept := len(got) - len(fmt.Sprintf(" … (+%d bytes)", len(tc.note)-tc.kept))
			if kept < tc.kept-3 || kept > tc.kept || got[:kept] != tc.note[:kept] {
				t.Fatalf("the note keeps %d bytes of the original, want about %d: %q", kept, tc.kept, got)
			}
			if want := fmt.Sprintf(" … (+%d bytes)", len(tc.note)-kept); !strings.HasSuffix(got, want) {
				t.Fatalf("the note ends %q, want it to end %q", got[kept:], want)
			}
		})
	}
}

type recorded struct{ note string }

func (r *recorded) Eventf(_ runtime.Object, _ runtime.Object, _, _, _, note string, args ...interface{}) {
	r.note = fmt.Sprintf(note, args...)
}

func TestBoundedFormatsThenCuts(t *testing.T) {
	inner := &recorded{}
	Bounded(inner).Eventf(nil, nil, "Normal", "Scheduled", "Schedule", "%s is %s: %s", "Scheduled", "True", strings.Repeat("x", 2*MaxLength))
	if len(inner.note) > MaxLength || !strings.HasPrefix(inner.note, "Scheduled is True: xxx") {
		t.Fatalf("recorded %d bytes: %q…", len(inner.note), inner.note[:40])
	}
	Bounded(inner).Eventf(nil, nil, "Normal", "Scheduled", "Schedule", "100% of the clusters")
	if inner.note != "100% of the clusters" {
		t.Fatalf("a note without arguments was formatted: %q", inner.note)
	}
	if Bounded(nil) != nil {
		t.Fatal("a nil recorder was wrapped")
	}
}
