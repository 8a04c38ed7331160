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

package join

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultTokenCleanupInterval is how often TokenCleaner looks for expired
// tokens.
const DefaultTokenCleanupInterval = time.Minute

// TokenCleaner deletes expired bootstrap tokens. It is a manager Runnable
// that runs in the leader only.
type TokenCleaner struct {
	Client    client.Client
	Namespace string
	Log       logr.Logger
	// Interval is how often it looks. Default: DefaultTokenCleanupInterval.
	Interval time.Duration
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// NeedLeaderElection is true: one replica cleans up.
func (c *TokenCleaner) NeedLeaderElection() bool { return true }

// Start deletes expired tokens at once and then every Interval until ctx ends.
func (c *TokenCleaner) Start(ctx context.Context) error {
	interval := c.Interval
	if interval <= 0 {
		interval = DefaultTokenCleanupInterval
	}
	now := c.Now
	if now == nil {
		now = time.Now
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := DeleteExpiredTokens(ctx, c.Client, c.Namespace, now())
		tokensExpired.Add(float64(n))
		switch {
		case err != nil && ctx.Err() == nil:
			c.Log.Error(err, "failed to delete expired bootstrap tokens")
		case n > 0:
			c.Log.Info("deleted expired bootstrap tokens", "count", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
