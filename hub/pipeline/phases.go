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
	"fmt"
)

// Phase is one named step of a controller's reconcile over a scope S that the
// steps share: load what the decision needs, decide (a pure function returning
// a plan), carry the plan out. The name completes "failed to …" in the error.
type Phase[S any] struct {
	Name string
	Run  func(ctx context.Context, s *S) error
}

// RunPhases runs the phases in order over s. It stops at the first error,
// wrapped with the phase's name, or after the first phase for which done
// reports true (nil: never). Every controller of the pipeline reconciles with
// it, so a reconcile reads as its table of phases.
func RunPhases[S any](ctx context.Context, s *S, done func(*S) bool, phases ...Phase[S]) error {
	for _, p := range phases {
		if err := p.Run(ctx, s); err != nil {
			return fmt.Errorf("failed to %s: %w", p.Name, err)
		}
		if done != nil && done(s) {
			return nil
		}
	}
	return nil
}
