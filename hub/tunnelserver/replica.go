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
	"fmt"
	"sync"
	"time"

	"github.com/flotilla-io/flotilla/hub/replica"
)

// DefaultReplicaLeaseDuration is Options.ReplicaLeaseDuration's default.
const DefaultReplicaLeaseDuration = 30 * time.Second

// replicaLease is this replica's Lease while the server runs.
type replicaLease struct{ l *replica.Lease }

// startReplicaLease takes this replica's Lease before any session is served.
func (s *Server) startReplicaLease(ctx context.Context) (*replicaLease, error) {
	lc := s.opts.LeaseClient
	if lc == nil {
		lc = s.direct
	}
	l := &replica.Lease{Client: lc, Namespace: s.opts.Namespace, Replica: s.opts.ReplicaName,
		Duration: s.opts.ReplicaLeaseDuration, Log: s.log.WithName("lease"),
		OnLost: s.standingLost, OnRegained: s.standingRegained}
	if s.opts.ProxyAdvertiseAddress != "" {
		l.Annotations = map[string]string{replica.AnnotationProxyAddress: s.opts.ProxyAdvertiseAddress}
	}
	if err := l.Start(ctx); err != nil {
		return nil, err
	}
	s.metrics.serving.Set(1)
	return &replicaLease{l: l}, nil
}

// release deletes the Lease once every session has ended.
func (r *replicaLease) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.l.Release(ctx)
}

// standing is whether this replica may serve agents (replica.Standing): lost
// while it could not renew its Lease in time.
type standing struct {
	mu   sync.Mutex
	lost bool
	// back is closed when the standing is regained; nil while it stands.
	back chan struct{}
}

// lose marks the standing lost; false if it already was.
func (st *standing) lose() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.lost {
		return false
	}
	st.lost, st.back = true, make(chan struct{})
	return true
}

// regain marks the standing regained and wakes what waits for it.
func (st *standing) regain() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.lost {
		st.lost = false
		close(st.back)
		st.back = nil
	}
}

// regained returns a channel closed once the standing is regained, or nil
// while the replica stands.
func (st *standing) regained() <-chan struct{} {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.back
}

// leaseLostMessage is why a replica without standing ends and refuses sessions.
func (s *Server) leaseLostMessage() string {
	return fmt.Sprintf("hub replica %s could not renew its Lease for %s (its API server is unreachable): it serves no agents until it can, so that the hub never counts an agent lost while this replica still answers it; redial another replica",
		s.opts.ReplicaName, replica.StaleAfter(s.opts.ReplicaLeaseDuration))
}

// standingLost ends every session this replica holds and makes it refuse new
// ones (and fail its readiness check) until standingRegained.
func (s *Server) standingLost() {
	if !s.standing.lose() {
		return
	}
	s.metrics.serving.Set(0)
	s.mu.Lock()
	held := make([]*memberSession, 0, len(s.sessions))
	for _, ms := range s.sessions {
		held = append(held, ms)
	}
	s.mu.Unlock()
	s.log.Error(nil, "ending every agent session: this replica could not renew its Lease in time", "sessions", len(held))
	why := s.leaseLostMessage()
	for _, ms := range held {
		ms.end(why)
	}
}

// standingRegained lets this replica serve again.
func (s *Server) standingRegained() {
	s.standing.regain()
	s.metrics.serving.Set(1)
}
