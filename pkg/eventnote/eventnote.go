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

// Package eventnote bounds the notes of the Events Flotilla records. The API
// server rejects an Event whose note is longer than MaxLength bytes, and the
// recorder drops it after logging the rejection: a condition message that
// names many clusters (a rollout waiting for 700 of them) would otherwise
// lose its Event at fleet scale. Bounded cuts the note instead, and says so.
package eventnote

import (
	"fmt"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// MaxLength is the longest note, in bytes, the API server accepts in an Event
// (events.k8s.io/v1 note; validation's NoteLengthLimit).
const MaxLength = 1024

// Bound returns note if it fits in MaxLength bytes, and otherwise its longest
// prefix that fits (cut between characters) followed by a mark that says how
// much was left out.
func Bound(note string) string {
	if len(note) <= MaxLength {
		return note
	}
	// The mark is at most len(" … (+N bytes)") with N below 10^7: 23 bytes.
	cut := MaxLength - 24
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return fmt.Sprintf("%s … (+%d bytes)", note[:cut], len(note)-cut)
}

// Bounded returns a recorder that records through r with each note bounded
// (Bound) after formatting.
func Bounded(r events.EventRecorder) events.EventRecorder {
	if r == nil {
		return nil
	}
	return bounded{r}
}

type bounded struct{ r events.EventRecorder }

func (b bounded) Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...interface{}) {
	if len(args) > 0 {
		note = fmt.Sprintf(note, args...)
	}
	b.r.Eventf(regarding, related, eventtype, reason, action, "%s", Bound(note))
}
