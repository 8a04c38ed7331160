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

package app

import (
	"context"
	"fmt"
	"github.com/flotilla-io/flotilla/hub/clusterprofile"
	"math/rand"
	"os"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/eviction"
	"github.com/flotilla-io/flotilla/hub/failover"
	"github.com/flotilla-io/flotilla/hub/join"
	"github.com/flotilla-io/flotilla/hub/location"
	"github.com/flotilla-io/flotilla/hub/membership"
	"github.com/flotilla-io/flotilla/hub/overrides"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/hub/placement"
	"github.com/flotilla-io/flotilla/hub/plan"
	"github.com/flotilla-io/flotilla/hub/proxy"
	"github.com/flotilla-io/flotilla/hub/replica"
	"github.com/flotilla-io/flotilla/hub/reportback"
	"github.com/flotilla-io/flotilla/hub/resources"
	"github.com/flotilla-io/flotilla/hub/rollout"
	"github.com/flotilla-io/flotilla/hub/scheduler"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
	"github.com/flotilla-io/flotilla/hub/scheduler/plugins"
	"github.com/flotilla-io/flotilla/hub/tunnelserver"
	"github.com/flotilla-io/flotilla/hub/updaterun"
	"github.com/flotilla-io/flotilla/hub/upsync"
	"github.com/flotilla-io/flotilla/hub/workcleanup"
	"github.com/flotilla-io/flotilla/hub/workgen"
	"github.com/flotilla-io/flotilla/pkg/eventnote"
)

// Scheme returns the types the hub reads and writes.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(clusterv1beta1.AddToScheme(s))
	utilruntime.Must(placementv1beta1.AddToScheme(s))
	utilruntime.Must(cpv1alpha1.AddToScheme(s))
	return s
}

// setupHub registers the hub's controllers and servers with the manager.
func setupHub(_ context.Context, mgr ctrl.Manager, opts *Options) error {
	// Reads of Secrets and fresh MemberClusters bypass the cache: caching every
	// Secret in the hub cluster would cost memory for nothing.
	direct, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return fmt.Errorf("failed to create a client: %w", err)
	}
	// Each writer of pipeline objects writes under its own field manager
	// (hub/pipeline/ownership.go says which fields are whose), also where it
	// does not name one.
	owner := func(manager string) client.Client { return client.WithFieldOwner(mgr.GetClient(), manager) }
	pipelineClient := newPipelineClient(mgr)
	pipe := func(manager string) client.Client { return client.WithFieldOwner(pipelineClient, manager) }
	dyn, err := dynamic.NewForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("failed to create a dynamic client: %w", err)
	}
	leases, err := client.New(leaseConfig(mgr.GetConfig()), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return fmt.Errorf("failed to create the client of the Lease renewals: %w", err)
	}
	upsyncHandler := &upsync.Handler{Client: direct, Dynamic: dyn, Mapper: mgr.GetRESTMapper(), Log: mgr.GetLogger().WithName("upsync")}
	tunnels, err := tunnelserver.New(tunnelserver.Options{
		Namespace:        opts.Namespace,
		ReplicaName:      opts.ReplicaName,
		BindAddress:      opts.TunnelBindAddress,
		AdvertiseAddress: opts.TunnelAdvertiseAddress,
		// Where the other replicas forward proxied requests for this one's members.
		ProxyAdvertiseAddress: opts.proxyAdvertiseAddress(),
		HeartbeatMisses:       opts.HeartbeatMisses,
		DisconnectGrace:       opts.DisconnectGrace,
		// Security and high availability.
		MemberCertificateLifetime:  opts.MemberCertificateLifetime,
		ServingCertificateLifetime: opts.ServingCertificateLifetime,
		JoinAttemptsPerMinute:      opts.JoinAttemptsPerMinute,
		HeartbeatRate:              opts.TunnelHeartbeatRate,
		StatusRate:                 opts.TunnelStatusRate,
		MaxConnections:             opts.TunnelMaxConnections,
		MaxHandshakes:              opts.TunnelMaxHandshakes,
		Admission:                  rate.NewLimiter(rate.Limit(opts.TunnelAdmissionRate), opts.TunnelAdmissionBurst),
		ReplicaLeaseDuration:       opts.ReplicaLeaseDuration,
		Upsync:                     upsyncHandler,
		LeaseClient:                client.WithFieldOwner(leases, pipeline.ManagerTunnelServer),
	}, mgr.GetClient(), client.WithFieldOwner(direct, pipeline.ManagerTunnelServer), mgr.GetCache(), metrics.Registry, eventRecorder(mgr, "tunnel"), mgr.GetLogger().WithName("tunnel"))
	if err != nil {
		return err
	}
	if err := mgr.Add(tunnels); err != nil {
		return fmt.Errorf("failed to add the tunnel server: %w", err)
	}
	if err := mgr.AddReadyzCheck("tunnel", tunnels.ReadyCheck); err != nil {
		return fmt.Errorf("failed to add the tunnel readiness check: %w", err)
	}
	// The planner reads the manager's cache and never writes; it selects
	// resources with the watcher below (set once it exists).
	planner := &plan.Planner{Reader: mgr.GetClient(), Framework: plugins.NewFramework(framework.Options{})}
	if opts.ProxyBindAddress != "0" {
		log := mgr.GetLogger().WithName("proxy")
		h, err := proxy.New(proxy.Options{
			Plan:                 proxy.PlanOptions{Planner: planner, Authorizer: proxy.SubjectAccessReviewer{Client: direct}, Mapper: mgr.GetRESTMapper()},
			Dialer:               tunnels,
			Authenticator:        &proxy.LoadedRequestHeader{Reader: direct, Log: log},
			Authorizer:           &proxy.CachingAuthorizer{Authorizer: proxy.SubjectAccessReviewer{Client: direct}},
			MaxInflightPerMember: opts.ProxyMaxInflightPerMember,
			RequestTimeout:       opts.ProxyRequestTimeout,
			MaxInflightPerUser:   opts.ProxyMaxInflightPerUser,
			UserQPS:              opts.ProxyUserQPS,
			UserBurst:            opts.ProxyUserBurst,
			MaxRequestBytes:      opts.ProxyMaxRequestBytes,
			MaxResponseBytes:     opts.ProxyMaxResponseBytes,
			StreamIdleTimeout:    opts.ProxyStreamIdleTimeout,
			MaxStreamDuration:    opts.ProxyMaxStreamDuration,
			Registerer:           metrics.Registry,
			Logger:               log,
			Peers: proxy.PeerOptions{Replica: opts.ReplicaName, CA: tunnels.CA,
				Directory: &proxy.LeaseDirectory{Members: mgr.GetClient(), Leases: direct, Namespace: opts.Namespace}},
		})
		if err != nil {
			return err
		}
		if err := mgr.Add(&proxy.Server{Addr: opts.ProxyBindAddress, GetCertificate: tunnels.GetCertificate, Handler: h,
			CABundle: tunnels.CABundle, Client: direct, Log: log}); err != nil {
			return fmt.Errorf("failed to add the API proxy: %w", err)
		}
	}
	// The leader deletes expired bootstrap tokens and records the members of a
	// replica whose Lease expired as disconnected.
	for _, r := range []manager.Runnable{
		&join.TokenCleaner{Client: direct, Namespace: opts.Namespace, Log: mgr.GetLogger().WithName("tokens")},
		&replica.Sweeper{Client: owner(pipeline.ManagerReplicaSweeper), Direct: direct, Recorder: eventRecorder(mgr, "replicas"),
			Namespace: opts.Namespace, Interval: opts.ReplicaLeaseDuration / 3, Log: mgr.GetLogger().WithName("replicas")},
	} {
		if err := mgr.Add(r); err != nil {
			return fmt.Errorf("failed to add %T: %w", r, err)
		}
	}
	watcher, err := resources.NewWatcher(mgr.GetConfig(), mgr.GetLogger().WithName("resources"), resources.Options{})
	if err != nil {
		return err
	}
	if err := mgr.Add(watcher); err != nil {
		return fmt.Errorf("failed to add the resource watcher: %w", err)
	}
	planner.Resources = watcher
	prom, err := opts.prometheus()
	if err != nil {
		return fmt.Errorf("failed to set up the client of --prometheus-url: %w", err)
	}
	// One change of a placement is timed through every controller it passes.
	spans := pipeline.NewSpans(mgr.GetLogger().WithName("spans"))
	controllers := []interface{ SetupWithManager(ctrl.Manager) error }{
		&placement.Reconciler{Client: pipe(pipeline.ManagerPlacement), Scheme: mgr.GetScheme(), Recorder: eventRecorder(mgr, "placement"), Resources: watcher,
			Workers: opts.Workers.Placement, Spans: spans},
		&scheduler.Reconciler{Client: pipe(pipeline.ManagerScheduler), Scheme: mgr.GetScheme(),
			Framework: plugins.NewFramework(framework.Options{}), Rand: rand.New(rand.NewSource(time.Now().UnixNano())),
			GracefulTimeout: opts.EvictionGracefulTimeout, Recorder: eventRecorder(mgr, "scheduler"), Workers: opts.Workers.Scheduler,
			Spans: spans},
		&failover.Reconciler{Client: pipe(pipeline.ManagerFailover), Recorder: eventRecorder(mgr, "failover"),
			DefaultTolerationSeconds: int64(opts.DefaultToleration / time.Second), // whole seconds: Validate
			Limiter:                  rate.NewLimiter(rate.Limit(opts.EvictionRate), opts.EvictionBurst),
			IsOurs:                   scheduler.IsOurs, Workers: opts.Workers.Failover},
		&failover.FailbackReconciler{Client: owner(pipeline.ManagerFailback), Recorder: eventRecorder(mgr, "failback"), IsOurs: scheduler.IsOurs},
		&failover.FencingReconciler{Client: owner(pipeline.ManagerFencing), Recorder: eventRecorder(mgr, "fencing"), Margin: opts.FencingMargin},
		&membership.Reconciler{Client: owner(pipeline.ManagerMembership), Recorder: eventRecorder(mgr, "membership"), NewMemberGrace: opts.NewMemberGrace,
			Workers: opts.Workers.Membership},
		&location.Reconciler{Client: mgr.GetClient()},
		&rollout.Reconciler{Client: pipe(pipeline.ManagerRollout), Workers: opts.Workers.Rollout, Recorder: eventRecorder(mgr, "rollout"),
			Prometheus: prom, Spans: spans},
		&workgen.Reconciler{Client: pipe(pipeline.ManagerWorkGenerator), Scheme: mgr.GetScheme(), Workers: opts.Workers.WorkGenerator,
			Recorder: eventRecorder(mgr, "workgen"), HubName: opts.HubName, Spans: spans, ReportWait: opts.WorkReportWait},
		&workcleanup.Reconciler{Client: owner(pipeline.ManagerWorkCleanup), Recorder: eventRecorder(mgr, "workcleanup"), Timeout: opts.WorkCleanupTimeout},
		&eviction.Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Recorder: eventRecorder(mgr, "eviction")},
		// Staged update runs roll out placements with strategy type External.
		&updaterun.Reconciler{Client: owner(pipeline.ManagerUpdateRun), Reader: mgr.GetAPIReader(), Recorder: eventRecorder(mgr, "updaterun"),
			Workers: opts.Workers.UpdateRun, Prometheus: prom, Spans: spans},
		&updaterun.ExternalReconciler{Client: owner(pipeline.ManagerUpdateRun)},
		&upsync.Reconciler{Client: owner(pipeline.ManagerUpsync), Handler: upsyncHandler},
		// Override snapshots: every change of an override rolls out like a resource change.
		&overrides.SnapshotReconciler{Client: owner(pipeline.ManagerOverrideSnapshot), Cluster: true},
		&overrides.SnapshotReconciler{Client: owner(pipeline.ManagerOverrideSnapshot)},
		&reportback.Reconciler{Client: mgr.GetClient(), Dynamic: dyn, Mapper: mgr.GetRESTMapper()},
	}
	if profiles, err := clusterProfiles(mgr, opts); err != nil {
		return err
	} else if profiles != nil {
		controllers = append(controllers, profiles)
	}
	for _, c := range controllers {
		if err := c.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("failed to set up %T: %w", c, err)
		}
	}
	return nil
}

// eventRecorder is the manager's recorder for a component, with every note cut
// to what the API server accepts (eventnote.Bound): an Event whose note names
// hundreds of clusters is recorded cut rather than rejected and lost.
func eventRecorder(mgr ctrl.Manager, name string) events.EventRecorder {
	return eventnote.Bounded(mgr.GetEventRecorder(name))
}

// newPipelineClient is the client of the controllers a placement's change
// passes through (placement, scheduler, failover, rollout, work generator):
// they read their own writes, and each other's, while the cache is behind
// (pipeline.OwnWrites). Without it a controller woken by one change reads a
// binding or placement older than its own last write and writes its status
// again: a second request, a conflict to retry, or conditions whose
// transition time moves although nothing changed.
func newPipelineClient(mgr ctrl.Manager) client.Client {
	return pipeline.NewOwnWrites(mgr.GetClient(), pipeline.PipelineKinds()...)
}

// clusterProfiles is the ClusterProfile publisher, or nil when it is off
// (--cluster-profile-namespace "") or the hub cluster has no ClusterProfile
// CRD; the hub says which in its log.
func clusterProfiles(mgr ctrl.Manager, opts *Options) (*clusterprofile.Reconciler, error) {
	log := mgr.GetLogger().WithName("clusterprofile")
	if opts.ClusterProfileNamespace == "" {
		log.Info("Not publishing ClusterProfiles: --cluster-profile-namespace is empty")
		return nil, nil
	}
	if !clusterprofile.Installed(mgr.GetRESTMapper()) {
		log.Info("Not publishing ClusterProfiles: the hub cluster has no ClusterProfile CRD (multicluster.x-k8s.io); install it and restart the hub")
		return nil, nil
	}
	var access clusterprofile.Access
	if opts.ProxyBindAddress != "0" {
		access.Server = opts.ClusterProfileServer
		cfg := mgr.GetConfig()
		access.CAData = cfg.CAData
		if len(access.CAData) == 0 && cfg.CAFile != "" {
			ca, err := os.ReadFile(cfg.CAFile)
			if err != nil {
				return nil, fmt.Errorf("failed to read the hub API server's CA for ClusterProfiles: %w", err)
			}
			access.CAData = ca
		}
	}
	log.Info("Publishing ClusterProfiles", "namespace", opts.ClusterProfileNamespace, "server", access.Server)
	return &clusterprofile.Reconciler{Client: client.WithFieldOwner(mgr.GetClient(), clusterprofile.FieldManager),
		Recorder: eventRecorder(mgr, "clusterprofile"), Namespace: opts.ClusterProfileNamespace, Access: access}, nil
}
