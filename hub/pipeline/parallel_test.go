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
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

func TestParallel(t *testing.T) {
	if errs := Parallel(0, func(int) error { t.Fatal("called"); return nil }); errs != nil {
		t.Fatalf("no writes: %v", errs)
	}
	// Every write runs once; errors stay at their index; a failure does not
	// stop the others.
	var calls [40]atomic.Int32
	var running, most atomic.Int32
	var once sync.Once
	// The writes wait until WritesAtOnce run together: more would show in
	// most, fewer would never be released.
	release := make(chan struct{})
	errs := Parallel(len(calls), func(i int) error {
		calls[i].Add(1)
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		if n == WritesAtOnce {
			once.Do(func() { close(release) })
		}
		<-release
		if i%7 == 3 {
			return fmt.Errorf("write %d failed", i)
		}
		return nil
	})
	for i := range calls {
		if c := calls[i].Load(); c != 1 {
			t.Errorf("write %d ran %d times", i, c)
		}
		want := i%7 == 3
		if got := errs[i] != nil; got != want {
			t.Errorf("write %d: error %v, want an error: %v", i, errs[i], want)
		}
	}
	if m := most.Load(); m != WritesAtOnce {
		t.Errorf("at most %d writes ran at once, want %d", m, WritesAtOnce)
	}
	if errs := Parallel(3, func(int) error { return nil }); errs != nil {
		t.Errorf("all succeeded, got %v", errs)
	}
	if errs := Parallel(1, func(int) error { return errors.New("x") }); len(errs) != 1 || errs[0] == nil {
		t.Errorf("one failing write: %v", errs)
	}
}
