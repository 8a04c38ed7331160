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
