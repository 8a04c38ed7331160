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

package tunnelserver

import (
	"context"

	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// handleUpsync hands an agent's Upsync message to the upsync handler, for the
// session's own cluster only.
func (s *Server) handleUpsync(ctx context.Context, ms *memberSession, m tunnel.Upsync) {
	outcome := "applied"
	switch {
	case s.opts.Upsync == nil:
		outcome = "dropped"
	default:
		if err := s.opts.Upsync.Handle(ctx, ms.name, m); err != nil {
			ms.log.Error(err, "failed to mirror an upsynced object", "work", m.WorkName)
			outcome = "error"
		}
	}
	s.metrics.statusReports.WithLabelValues("upsync-" + outcome).Inc()
}
