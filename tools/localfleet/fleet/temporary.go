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

package fleet

import (
	"context"
	"fmt"
	"os"
)

// Temporary brings a fleet up in a new temporary folder, for a tool that
// measures something on a fleet of its own (o.Dir is ignored). The returned
// stop takes the fleet down again; with keep it leaves the fleet and says
// where it is and how to take it down.
func Temporary(ctx context.Context, tool string, o Options, keep bool) (dir string, stop func(), err error) {
	dir, err = os.MkdirTemp("", "flotilla-"+tool+"-")
	if err != nil {
		return "", nil, err
	}
	o.Dir = dir
	f, err := New(o)
	if err != nil {
		return "", nil, err
	}
	if err := f.Up(ctx); err != nil {
		return "", nil, err
	}
	stop = func() {
		if keep {
			fmt.Fprintf(f.opts.Out, "%s: leaving the fleet in %s (go run ./tools/localfleet down --dir %s)\n", tool, dir, dir)
			return
		}
		if err := f.Down(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintf(f.opts.Out, "%s: fleet down: %v\n", tool, err)
		}
	}
	return dir, stop, nil
}
