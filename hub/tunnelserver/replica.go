package tunnelserver

import (
	"context"
	"time"

	"github.com/flotilla-io/flotilla/hub/replica"
)

// DefaultReplicaLeaseDuration is Options.ReplicaLeaseDuration's default.
const DefaultReplicaLeaseDuration = 15 * time.Second

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
