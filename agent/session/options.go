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

package session

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/go-logr/logr"

	"github.com/flotilla-io/flotilla/agent/apply"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// Defaults of Options.
const (
	// DefaultHeartbeatPeriod is used when the hub's HelloAck names no period:
	// the protocol's default, tunnel.DefaultHeartbeatPeriod.
	DefaultHeartbeatPeriod = tunnel.DefaultHeartbeatPeriod
	// DefaultRecheckInterval is how often Works that are applied but not
	// available are re-evaluated.
	DefaultRecheckInterval = 5 * time.Second
	// DefaultMaxConcurrentApplies bounds how many Works are applied (or
	// removed, or re-evaluated) at once.
	DefaultMaxConcurrentApplies = 4
	// DefaultRetryInitialInterval and DefaultRetryMaxInterval bound the
	// per-Work backoff of retrying a Work that did not apply fully.
	DefaultRetryInitialInterval = 2 * time.Second
	DefaultRetryMaxInterval     = 5 * time.Minute
	// DefaultMissedAcks is how many heartbeat periods without a HeartbeatAck
	// make the agent drop the session and reconnect.
	DefaultMissedAcks = 6
	// DefaultFenceCheckInterval is how often the agent checks whether it has
	// been cut off from the hub for longer than a fenced Work's lease.
	DefaultFenceCheckInterval = time.Second
)

// Applier is what the session needs of the agent's apply library;
// *apply.Applier is one.
type Applier interface {
	// Apply makes the member match the Work and returns its status.
	Apply(ctx context.Context, work *placementv1beta1.Work) (placementv1beta1.WorkStatus, error)
	// Status re-evaluates the Work's status without applying anything.
	Status(ctx context.Context, work *placementv1beta1.Work) (placementv1beta1.WorkStatus, error)
	// RemoveWork removes what the named Work applied and returns the objects it
	// released instead of deleting them.
	RemoveWork(ctx context.Context, workName string) ([]apply.Released, error)
	// Inventory lists the Works the member holds.
	Inventory(ctx context.Context) ([]apply.Record, error)
	// Fence stops the workloads of the named Work as action says, touching
	// only what the Work applied.
	Fence(ctx context.Context, workName string, action placementv1beta1.FencingAction) (apply.Fenced, error)
	// SaveLastExchange records on the member when the agent sent the last
	// heartbeat the hub acknowledged; LastExchange reads it back (zero when
	// there is none).
	SaveLastExchange(ctx context.Context, sentAt time.Time) error
	LastExchange(ctx context.Context) (time.Time, error)
}

var _ Applier = (*apply.Applier)(nil)

// PropertySource gives the member's properties for a heartbeat, at once;
// *properties.Collector is one.
// Upsyncer mirrors objects born on the member to the hub for the Works it is
// given (package upsync).
type Upsyncer interface {
	// Set starts or changes the upsync of a Work that was applied.
	Set(work *placementv1beta1.Work)
	// Remove stops the upsync of a Work that was removed.
	Remove(workName string)
	// Resync sends everything again, for a new session.
	Resync()
}

// APIProxyServer serves the API proxy streams of one session, accepted from
// l, until l or the session closes or ctx is done (agent/proxy.Handler).
type APIProxyServer interface {
	Serve(ctx context.Context, l net.Listener) error
}

type PropertySource interface {
	Latest() tunnel.ClusterProperties
}

// Options configure a Runner.
type Options struct {
	// Applier applies the Works the hub sends. Required.
	Applier Applier

	// Properties gives the properties sent in heartbeats. Default: none (the
	// heartbeats carry zero properties).
	Properties PropertySource

	// Metrics records heartbeats, the connection state and status reports.
	// Default: nil (none).
	Metrics *Metrics

	// DefaultHeartbeatPeriod is the heartbeat period when the hub announces
	// none. Default: DefaultHeartbeatPeriod (5s).
	DefaultHeartbeatPeriod time.Duration

	// MissedAcks is how many heartbeat periods may pass without a
	// HeartbeatAck before the agent drops the session and reconnects.
	// Default: DefaultMissedAcks (6).
	MissedAcks int

	// RecheckInterval is how often Works that are applied but not available
	// are re-evaluated (and reported when their status changed). Default:
	// DefaultRecheckInterval (5s).
	RecheckInterval time.Duration

	// ChangesWatched is set when the Applier watches the objects it applied and
	// reports their changes through Runner.Changed: Works are then rechecked on
	// every change and never polled, and RecheckInterval is not used.
	// Default: false (Works applied but not available are polled).
	ChangesWatched bool

	// Upsync, if set, is told of every Work applied and removed, and asked to
	// send everything again in every new session (after WorkSyncDone). It sends
	// through Runner.SendUpsync. Default: nil (no upsync).
	Upsync Upsyncer

	// APIProxy, if set, serves the API proxy streams the hub opens in the
	// sessions that negotiated tunnel.CapabilityAPIProxy: announce the
	// capability in Hello exactly when this is set. Default: nil (no proxy).
	APIProxy APIProxyServer
	// MaxConcurrentApplies bounds how many Works are processed at once.
	// Default: DefaultMaxConcurrentApplies (4).
	MaxConcurrentApplies int

	// RetryInitialInterval and RetryMaxInterval bound the per-Work
	// exponential backoff of retrying a Work that did not apply fully.
	// Defaults: DefaultRetryInitialInterval (2s), DefaultRetryMaxInterval
	// (5m).
	RetryInitialInterval, RetryMaxInterval time.Duration

	// Logger receives the Runner's logs. Default: the logger in Run's
	// context, else none.
	Logger logr.Logger

	// FenceCheckInterval is how often the agent checks whether it has been
	// cut off from the hub for longer than a fenced Work's lease
	// (spec.fencing). Default: DefaultFenceCheckInterval (1s).
	FenceCheckInterval time.Duration
}

func (o *Options) complete(ctx context.Context) error {
	if o.Applier == nil {
		return errors.New("session: Options.Applier is required")
	}
	if o.Properties == nil {
		o.Properties = noProperties{}
	}
	if o.DefaultHeartbeatPeriod <= 0 {
		o.DefaultHeartbeatPeriod = DefaultHeartbeatPeriod
	}
	if o.MissedAcks <= 0 {
		o.MissedAcks = DefaultMissedAcks
	}
	if o.RecheckInterval <= 0 {
		o.RecheckInterval = DefaultRecheckInterval
	}
	if o.MaxConcurrentApplies <= 0 {
		o.MaxConcurrentApplies = DefaultMaxConcurrentApplies
	}
	if o.RetryInitialInterval <= 0 {
		o.RetryInitialInterval = DefaultRetryInitialInterval
	}
	if o.RetryMaxInterval <= 0 {
		o.RetryMaxInterval = DefaultRetryMaxInterval
	}
	o.RetryMaxInterval = max(o.RetryMaxInterval, o.RetryInitialInterval)
	if o.FenceCheckInterval <= 0 {
		o.FenceCheckInterval = DefaultFenceCheckInterval
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.FromContextOrDiscard(ctx)
	}
	return nil
}

type noProperties struct{}

func (noProperties) Latest() tunnel.ClusterProperties { return tunnel.ClusterProperties{} }
