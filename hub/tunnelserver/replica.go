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
	"time"

	"github.com/flotilla-io/flotilla/hub/replica"
)

// DefaultReplicaLeaseDuration is Options.ReplicaLeaseDuration's default.
const DefaultReplicaLeaseDuration = 30 * time.Second

// replicaLease is this replica's Lease while the server runs.
type replicaLease struct{ l *replica.Lease }

// startReplicaLease takes this replica's Lease before any session is served.
func (s *Server) startReplicaLease(ctx context.Context) (*replicaLease, error) {
	l := &replica.Lease{Client: s.direct, Namespace: s.opts.Namespace, Replica: s.opts.ReplicaName,
		Duration: s.opts.ReplicaLeaseDuration, Log: s.log.WithName("lease")}
	if err := l.Start(ctx); err != nil {
		return nil, err
	}
	return &replicaLease{l: l}, nil
}

// release deletes the Lease once every session has ended.
func (r *replicaLease) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.l.Release(ctx)
}
