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

package pipeline

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type trail struct {
	ran  []string
	stop string
	fail string
}

func step(name string) Phase[trail] {
	return Phase[trail]{Name: name, Run: func(_ context.Context, s *trail) error {
		s.ran = append(s.ran, name)
		if s.fail == name {
			return errors.New("boom")
		}
		return nil
	}}
}

func TestRunPhases(t *testing.T) {
	stopped := func(s *trail) bool { return len(s.ran) > 0 && s.ran[len(s.ran)-1] == s.stop }
	for _, tc := range []struct {
		name    string
		s       trail
		done    func(*trail) bool
		wantRan []string
		wantErr string
	}{
		{name: "every phase runs in order", done: stopped, wantRan: []string{"load", "decide", "write"}},
		{name: "a nil done never stops", wantRan: []string{"load", "decide", "write"}},
		{name: "done stops after the phase that set it", s: trail{stop: "load"}, done: stopped, wantRan: []string{"load"}},
		{name: "an error stops and names the phase", s: trail{fail: "decide"}, done: stopped,
			wantRan: []string{"load", "decide"}, wantErr: "failed to decide: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			err := RunPhases(context.Background(), &s, tc.done, step("load"), step("decide"), step("write"))
			if diff := cmp.Diff(tc.wantRan, s.ran); diff != "" {
				t.Errorf("phases run (-want +got):\n%s", diff)
			}
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.wantErr {
				t.Errorf("error = %q, want %q", got, tc.wantErr)
			}
		})
	}
}
