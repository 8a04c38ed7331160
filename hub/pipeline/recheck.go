package pipeline

import "time"

// Sooner is the shorter of two recheck waits, where zero (or less) means no
// wait at all: the controllers that wake for deadlines they computed (docs/
// pipeline.md, "What wakes whom") fold their deadlines with it.
func Sooner(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	}
	return min(a, b)
}
