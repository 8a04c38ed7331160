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

// Package window reads maintenance windows (placementv1beta1.MaintenanceWindow)
// and tells, for a moment, whether one is open, when it closes and when the next
// one opens. The rolling update (hub/rollout) and staged update runs
// (hub/updaterun) move clusters only while a window is open.
package window

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	// The hub's image may have no zoneinfo: the time zone database is built in.
	_ "time/tzdata"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Window is one parsed maintenance window.
type Window struct {
	// Spec is the window as the user wrote it.
	Spec     placementv1beta1.MaintenanceWindow
	schedule cron.Schedule
	location *time.Location
	duration time.Duration
}

// parser reads the five standard cron fields and nothing else: no seconds, no
// descriptors such as @daily.
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// reference is a moment from which every schedule that ever fires fires within
// the parser's search (five years), 29 February included.
var reference = time.Date(2001, time.January, 1, 0, 0, 0, 0, time.UTC)

// ErrInvalid marks the errors of Parse: a window the user must change.
var ErrInvalid = errors.New("invalid maintenance window")

// Parse reads windows; field is where they are in the object (such as
// spec.strategy.rollingUpdate.maintenanceWindows), for the error, which names
// the window's field (field[i].timeZone) and what is wrong with it, and wraps
// ErrInvalid. It refuses a time zone the hub does not know, a schedule the cron
// parser refuses (the API's pattern lets through, for example, a misspelt month
// name), a schedule that never fires (30 February), and a duration outside the
// API's bounds.
func Parse(ws []placementv1beta1.MaintenanceWindow, field string) ([]Window, error) {
	out := make([]Window, 0, len(ws))
	for i, w := range ws {
		at := fmt.Sprintf("%s[%d]", field, i)
		if len(w.Schedule) > 0 && (w.Schedule[0] == '@' || strings.ContainsRune(w.Schedule, '=')) {
			return nil, fmt.Errorf("%w: %s.schedule %q: give five cron fields (minute hour day-of-month month day-of-week), no descriptor or time zone prefix; set the time zone in %s.timeZone", ErrInvalid, at, w.Schedule, at)
		}
		sched, err := parser.Parse(w.Schedule)
		if err != nil {
			return nil, fmt.Errorf("%w: %s.schedule %q: %w", ErrInvalid, at, w.Schedule, err)
		}
		tz := w.TimeZone
		if tz == "" {
			tz = "UTC"
		}
		loc, err := time.LoadLocation(tz)
		if err != nil {
			return nil, fmt.Errorf("%w: %s.timeZone %q is not a time zone the hub knows: give an IANA name such as Europe/Berlin or UTC", ErrInvalid, at, w.TimeZone)
		}
		if sched.Next(reference.In(loc)).IsZero() {
			return nil, fmt.Errorf("%w: %s.schedule %q never fires (a day that does not exist in the months given?)", ErrInvalid, at, w.Schedule)
		}
		d := w.Duration.Duration
		if d < time.Minute || d > 7*24*time.Hour {
			return nil, fmt.Errorf("%w: %s.duration %s must be from 1m to 168h", ErrInvalid, at, d)
		}
		out = append(out, Window{Spec: w, schedule: sched, location: loc, duration: d})
	}
	return out, nil
}

// State is what the windows say about one moment.
type State struct {
	// Open: a window is open at the moment.
	Open bool
	// Closes, when Open, is when the windows open at the moment are all closed
	// again: the end of the open period, later windows that open before it ends
	// included. Zero when the period goes on beyond what At looks ahead
	// (maxOccurrences openings).
	Closes time.Time
	// Opens is when the next window opens: after the moment when every window is
	// closed, after Closes when one is open. Zero when no window opens again
	// within the cron parser's search (five years), or when Closes is zero.
	Opens time.Time
}

// maxOccurrences bounds how many openings At follows to find where an open
// period ends (a window every minute lasting an hour never ends).
const maxOccurrences = 1000

// At tells whether a window is open at now, when the open period ends and when
// the next window opens. The rules:
//
//   - A window opens at every time its schedule fires, read on the wall clock of
//     its time zone, and is open from then (inclusive) until its duration of
//     elapsed time later (exclusive). A window that opened yesterday evening for
//     three hours is open after midnight.
//   - Daylight saving changes are the cron parser's: a wall-clock time that is
//     skipped when clocks go forward does not fire that day (02:30 on the last
//     Sunday of March in Europe/Berlin), and one that repeats when clocks go back
//     fires at both occurrences, an hour apart (so that night's window lasts an
//     hour longer when its duration is an hour or more). The duration is elapsed
//     time: a 2h window opening at 01:00 on the day clocks go forward closes at
//     04:00 wall-clock.
//   - Several windows form one schedule: open when any is open; an open period
//     lasts while openings follow one another without a gap (one window opening
//     exactly when another closes continues it).
//   - No windows: always open (Closes and Opens zero).
func At(ws []Window, now time.Time) State {
	if len(ws) == 0 {
		return State{Open: true}
	}
	var closes time.Time
	for _, w := range ws {
		// The openings that cover now are those after now-duration and not after now.
		for s, n := w.next(now.Add(-w.duration)), 0; !s.IsZero() && !s.After(now) && n < maxOccurrences; s, n = w.next(s), n+1 {
			if end := s.Add(w.duration); end.After(closes) {
				closes = end
			}
		}
	}
	if closes.IsZero() {
		return State{Opens: nextOpening(ws, now)}
	}
	// Extend the period by openings before it ends, until none does.
	for n := 0; ; {
		extended := false
		for _, w := range ws {
			for s := w.next(now); !s.IsZero() && !s.After(closes) && n < maxOccurrences; s, n = w.next(s), n+1 {
				if end := s.Add(w.duration); end.After(closes) {
					closes, extended = end, true
				}
			}
		}
		if n >= maxOccurrences {
			return State{Open: true}
		}
		if !extended {
			break
		}
	}
	return State{Open: true, Closes: closes, Opens: nextOpening(ws, closes)}
}

// nextOpening is the first opening of any window strictly after t, or zero.
func nextOpening(ws []Window, t time.Time) time.Time {
	var first time.Time
	for _, w := range ws {
		if s := w.next(t); !s.IsZero() && (first.IsZero() || s.Before(first)) {
			first = s
		}
	}
	return first
}

// next is the window's first opening strictly after t, in UTC, or zero.
func (w Window) next(t time.Time) time.Time {
	s := w.schedule.Next(t.In(w.location))
	if s.IsZero() {
		return s
	}
	return s.UTC()
}

// String describes the window for messages: "0 22 * * 1-5 Europe/Berlin for 2h0m0s".
func (w Window) String() string {
	tz := w.Spec.TimeZone
	if tz == "" {
		tz = "UTC"
	}
	return fmt.Sprintf("%q %s for %s", w.Spec.Schedule, tz, w.duration)
}
