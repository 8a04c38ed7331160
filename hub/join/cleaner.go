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
