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
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/flotilla-io/flotilla/hub/analysis"
	"github.com/flotilla-io/flotilla/hub/failover"
	"github.com/flotilla-io/flotilla/hub/proxy"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// Options configures the hub process. Every field is a flag; defaults are set in
// NewOptions and nowhere else.
type Options struct {
	// Kubeconfig is the path of a kubeconfig for the hub cluster. Empty means the
	// in-cluster config, or $KUBECONFIG. Default: "".
	Kubeconfig string
	// Namespace is the hub's own namespace: tokens, the tunnel CA, leases.
	// Default: flotilla-system.
	Namespace string
	// HubName names this hub (the fleet) on member clusters: every object an
	// agent applies carries it in the annotation placement.flotilla.io/hub,
	// next to the placement, resource index and Work that placed it. Give
	// fleets that share member clusters different names. "" leaves the
	// annotation out. At most 253 characters. Default: flotilla-hub.
	HubName string
	// ReplicaName identifies this hub replica in leases and in MemberCluster status.
	// Default: $POD_NAME, else the host name.
	ReplicaName string
	// MetricsBindAddress serves Prometheus metrics; "0" disables it. Default: ":8080".
	MetricsBindAddress string
	// HealthProbeBindAddress serves /healthz and /readyz. Default: ":8081".
	HealthProbeBindAddress string
	// PprofBindAddress serves Go's net/http/pprof profiles (heap, goroutines,
	// CPU) for measuring the hub; "0" disables it. Default: "0".
	PprofBindAddress string
	// TunnelBindAddress is where agents connect (TLS; join and tunnel). Default: ":8443".
	TunnelBindAddress string
	// TunnelAdvertiseAddress is the host:port agents are told to dial in join
	// commands. Default: the tunnel bind address, with the host name if it has no host.
	TunnelAdvertiseAddress string
	// LeaderElect makes the controllers run in one replica at a time. The tunnel
	// server runs in every replica regardless. Default: true.
	LeaderElect bool
	// LeaderElectionLeaseDuration is how long a leader's lease lasts; the
	// leader renews it every third of it, and a standby takes over within it
	// when the leader dies (at once when it stops cleanly: it lets the lease
	// go). Default: 30s, so that the renewals cost 6 writes a minute.
	LeaderElectionLeaseDuration time.Duration
	// HeartbeatMisses is how many heartbeat periods without a heartbeat make a
	// member's agent disconnected. Default: 3.
	HeartbeatMisses int
	// DisconnectGrace is how long the hub keeps a member's last known status
	// after its agent's session ended (other than by missed heartbeats) before
	// it records the agent disconnected, which turns the member's placements
	// Unknown (AgentDisconnected); an agent that reconnects within it (a
	// restart, an upgrade) changes nothing. The hub's knowledge of a member is
	// always up to one heartbeat period old, so one period of grace leaves
	// status no older than it may already be. 0: no grace. Default: 5s
	// (tunnel.DefaultHeartbeatPeriod).
	DisconnectGrace time.Duration
	// DefaultToleration is how long a placement stays on a cluster with a
	// NoExecute taint it does not tolerate (e.g. unreachable), in whole seconds;
	// 0 moves it at once. Default: 60s.
	DefaultToleration time.Duration
	// EvictionGracefulTimeout bounds how long an evicted binding is kept while its
	// replacement is not available yet; 0 keeps none. Default: 5m.
	EvictionGracefulTimeout time.Duration
	// EvictionRate and EvictionBurst pace taint evictions across the fleet
	// (evictions per second and burst). Default: 1 and 10.
	EvictionRate  float64
	EvictionBurst int
	// WorkCleanupTimeout is how long a deleted Work waits for its member to confirm
	// it removed the Work's objects (a member that never answers then no longer
	// holds up a placement's or a cluster's deletion); 0 waits not at all.
	// Default: 5m.
	WorkCleanupTimeout time.Duration
	// WorkReportWait is how long the work generator holds a binding's status
	// write, after it wrote the binding's Work, for the agent's report on the
	// Work, so that one write says both (a write less for every cluster of
	// every change when agents answer in time); 0 writes at once. Default: 1s.
	WorkReportWait time.Duration
	// FencingMargin is added to a fenced placement's lease (policy.fencing)
	// before the hub counts a copy on a cut-off member as stopped and starts
	// the placement elsewhere: it covers the member's clock running slower
	// than the hub's over the lease, the agent's check interval and the pods'
	// termination. Default: 45s (failover.DefaultFencingMargin).
	FencingMargin time.Duration
	// APIServerTimeout bounds the start-up check that the API server is reachable.
	// Default: 30s.
	APIServerTimeout time.Duration
	// NewMemberGrace is how long after joining a member that has not been healthy
	// yet gets no not-ready taint (its first heartbeat may come before its agent
	// has probed the member API server). 0 taints at once. Default: 30s.
	NewMemberGrace time.Duration

	// Security and high availability (docs/operations/security.md, high-availability.md).

	// MemberCertificateLifetime is how long a member certificate is valid;
	// agents renew theirs over mutual TLS after two thirds of it. Default: 720h.
	MemberCertificateLifetime time.Duration
	// ServingCertificateLifetime is how long the tunnel's serving certificate
	// (kept in a Secret) is valid; it is reissued after two thirds. Default: 2160h.
	ServingCertificateLifetime time.Duration
	// JoinAttemptsPerMinute rate-limits join requests per source address.
	// Default: 10.
	JoinAttemptsPerMinute int
	// TunnelHeartbeatRate and TunnelStatusRate are how many heartbeats and
	// status reports per second one session may send; faster ones are read
	// later. Defaults: 1 and 50.
	TunnelHeartbeatRate, TunnelStatusRate float64
	// TunnelMaxConnections and TunnelMaxHandshakes cap the tunnel port's open
	// connections and its not yet authorized ones. Defaults: 10000 and 64.
	TunnelMaxConnections, TunnelMaxHandshakes int
	// TunnelAdmissionRate and TunnelAdmissionBurst pace new connections to the
	// tunnel port (tunnel.Server.Admission): after a burst, one a 1/rate
	// second; faster ones are closed before their TLS handshake and their
	// agents redial after a jittered backoff. A whole fleet reconnecting after
	// a hub restart (or joining at once) then reaches the API server at this
	// rate. Defaults: 50 a second and 100.
	TunnelAdmissionRate  float64
	TunnelAdmissionBurst int
	// CacheSyncTimeout is how long a controller waits for the hub's caches to
	// list the fleet at start-up before the hub gives up and exits (large
	// fleets on a busy API server take minutes). Default: 5m.
	CacheSyncTimeout time.Duration
	// ReplicaLeaseDuration is how long this replica's Lease lasts (renewed every
	// third of it); the leader records the members of a replica whose Lease
	// expired as disconnected. Default: 30s, 6 writes a minute per replica.
	ReplicaLeaseDuration time.Duration
	// MemoryLimit is the hub container's memory limit (a quantity: bytes, or
	// with a suffix such as 2Gi); "" when unknown. The Deployment passes its
	// limits.memory in $FLOTILLA_MEMORY_LIMIT. Default: $FLOTILLA_MEMORY_LIMIT.
	MemoryLimit string
	// MemoryLimitRatio is the share of MemoryLimit given to Go as its soft memory
	// limit (debug.SetMemoryLimit): near it the collector works harder rather
	// than the container being killed at its limit. The resident set runs some
	// 5-7 % above Go's limit (1 918 MiB at 1 800 MiB with 10 000 members), hence
	// less than 1. 0 leaves Go's limit alone; $GOMEMLIMIT, when set, wins.
	// Default: 0.9.
	MemoryLimitRatio float64
	// Workers are how many objects each pipeline controller reconciles at once.
	Workers WorkerOptions

	// The API proxy (hub/proxy, docs/how-to/reach-members.md).

	// ProxyBindAddress serves the aggregated API proxy.flotilla.io (APIService
	// v1beta1.proxy.flotilla.io, Service flotilla-hub port proxy) over TLS
	// with the tunnel's serving certificate; "0" disables it. Default: "0"
	// (several hub processes share test machines); manifests/hub and the
	// chart set ":8445".
	ProxyBindAddress string
	// ProxyAdvertiseAddress is the host:port at which the other hub replicas
	// reach this replica's API proxy to forward requests for the members
	// whose sessions it holds; it is published on the replica's Lease
	// (annotation flotilla.io/proxy-address). Default: "" — $POD_IP (the
	// chart and manifests/hub set it) with the port of ProxyBindAddress, else
	// ProxyBindAddress itself when it names a host, else the host name.
	ProxyAdvertiseAddress string
	// ProxyMaxInflightPerMember bounds the proxied requests in flight to one
	// member, watches and exec sessions included; more get 429. Default: 100.
	ProxyMaxInflightPerMember int
	// ProxyRequestTimeout bounds a proxied request that is not long-running
	// (watch, logs -f, exec, attach and port-forward are); a slower one gets
	// 504. Default: 60s.
	ProxyRequestTimeout time.Duration
	// ProxyMaxInflightPerUser bounds one hub user's proxied requests in
	// flight over every member; more get 429. Default: 50.
	ProxyMaxInflightPerUser int
	// ProxyUserQPS and ProxyUserBurst bound how fast one hub user sends
	// proxied requests; faster ones get 429 with Retry-After, which
	// client-go waits out. Defaults: 50 a second, bursts of 100.
	ProxyUserQPS   float64
	ProxyUserBurst int
	// ProxyMaxRequestBytes bounds a proxied request's body (413). Default:
	// 3 MiB, kube-apiserver's own default.
	ProxyMaxRequestBytes int64
	// ProxyMaxResponseBytes bounds the response to a proxied request that
	// is not long-running; a larger one is cut. Default: 256 MiB.
	ProxyMaxResponseBytes int64
	// ProxyStreamIdleTimeout ends a proxied exec, attach or port-forward
	// that carried nothing for this long. Default: 4h, the kubelet's
	// default --streaming-connection-idle-timeout.
	ProxyStreamIdleTimeout time.Duration
	// ProxyMaxStreamDuration ends any long-running proxied request (watch,
	// logs -f, exec, attach, port-forward) after this long. Default: 24h.
	ProxyMaxStreamDuration time.Duration

	// ClusterProfiles (hub/clusterprofile, docs/how-to/reach-members.md).

	// ClusterProfileNamespace holds the ClusterProfile the hub publishes for
	// every member, when the hub cluster has the ClusterProfile CRD; ""
	// publishes none. Default: "flotilla-system".
	ClusterProfileNamespace string
	// ClusterProfileServer is the address of the hub's API server that the
	// profiles' access provider names (the proxy path is added); profiles
	// name no access provider while the API proxy is off. Default:
	// "https://kubernetes.default.svc", for consumers in the hub cluster.
	ClusterProfileServer string

	// Prometheus, for the prometheus checks of staged runs' analyses
	// (docs/concepts/staged-runs.md).

	// PrometheusURL is the base URL of the Prometheus the prometheus checks
	// query, e.g. http://prometheus.monitoring:9090. "" configures none: a
	// prometheus check then fails its round, saying to set this flag.
	// Default: "".
	PrometheusURL string
	// PrometheusBearerTokenFile is a file whose content is sent as a bearer
	// token with every query (read again for each); "" sends none. Default: "".
	PrometheusBearerTokenFile string
	// PrometheusCAFile is a PEM file of the certificate authorities of an https
	// Prometheus; "" trusts the system's. Default: "".
	PrometheusCAFile string
	// PrometheusTimeout bounds one query; a slower one fails its round.
	// Default: 10s (analysis.DefaultPrometheusTimeout).
	PrometheusTimeout time.Duration
}

// WorkerOptions are the worker counts of the placement pipeline's controllers
// (--<controller>-workers). Each must be at least 1.
//
// Most of a worker's time is a round trip to the API server, so the counts of
// the controllers every placement passes through are sized for many
// placements arriving together: at 1 000 members and 100 placements created
// at once (650 bindings, fleetsim, 2026-11-28), 4 work generator workers kept
// the last placement waiting 81 s, 16 (with 8, 4 and 4 for the placement,
// scheduler and rollout controllers) 46 s on a busier machine.
type WorkerOptions struct {
	// Placement: placements snapshotted and reported at once. Default: 8.
	Placement int
	// Scheduler: placements scheduled at once. Default: 4.
	Scheduler int
	// Failover: placements whose taint evictions are decided at once. Default: 1.
	Failover int
	// Rollout: placements rolled out at once. Default: 4.
	Rollout int
	// WorkGenerator: bindings turned into Work at once. Default: 16.
	WorkGenerator int
	// UpdateRun: staged update runs progressed at once. Default: 1.
	UpdateRun int
	// Membership: member clusters whose labels, finalizer, taints and first
	// conditions are kept at once (a fleet joining at once). Default: 4.
	Membership int
}

// NewOptions returns Options with every default filled in.
func NewOptions() *Options {
	replica := os.Getenv("POD_NAME")
	if replica == "" {
		replica, _ = os.Hostname()
	}
	return &Options{
		Namespace:                   "flotilla-system",
		HubName:                     "flotilla-hub",
		ReplicaName:                 replica,
		MetricsBindAddress:          ":8080",
		HealthProbeBindAddress:      ":8081",
		PprofBindAddress:            "0",
		TunnelBindAddress:           ":8443",
		LeaderElect:                 true,
		LeaderElectionLeaseDuration: 30 * time.Second,
		APIServerTimeout:            30 * time.Second,
		HeartbeatMisses:             3,
		DisconnectGrace:             tunnel.DefaultHeartbeatPeriod,
		DefaultToleration:           60 * time.Second,
		EvictionGracefulTimeout:     5 * time.Minute,
		EvictionRate:                1,
		EvictionBurst:               10,
		WorkCleanupTimeout:          5 * time.Minute,
		WorkReportWait:              time.Second,
		FencingMargin:               failover.DefaultFencingMargin,
		NewMemberGrace:              30 * time.Second,
		MemberCertificateLifetime:   30 * 24 * time.Hour,
		ServingCertificateLifetime:  90 * 24 * time.Hour,
		JoinAttemptsPerMinute:       10,
		TunnelHeartbeatRate:         1,
		TunnelStatusRate:            50,
		TunnelMaxConnections:        10000,
		TunnelMaxHandshakes:         64,
		TunnelAdmissionRate:         50,
		TunnelAdmissionBurst:        100,
		CacheSyncTimeout:            5 * time.Minute,
		ReplicaLeaseDuration:        30 * time.Second,
		MemoryLimit:                 os.Getenv("FLOTILLA_MEMORY_LIMIT"),
		MemoryLimitRatio:            0.9,
		ProxyBindAddress:            "0",
		ProxyMaxInflightPerMember:   proxy.DefaultMaxInflightPerMember,
		ProxyRequestTimeout:         proxy.DefaultRequestTimeout,
		ProxyMaxInflightPerUser:     proxy.DefaultMaxInflightPerUser,
		ProxyUserQPS:                proxy.DefaultUserQPS,
		ProxyUserBurst:              proxy.DefaultUserBurst,
		ProxyMaxRequestBytes:        proxy.DefaultMaxRequestBytes,
		ProxyMaxResponseBytes:       proxy.DefaultMaxResponseBytes,
		ProxyStreamIdleTimeout:      proxy.DefaultStreamIdleTimeout,
		ProxyMaxStreamDuration:      proxy.DefaultMaxStreamDuration,
		ClusterProfileNamespace:     "flotilla-system",
		ClusterProfileServer:        "https://kubernetes.default.svc",
		PrometheusTimeout:           analysis.DefaultPrometheusTimeout,
		Workers: WorkerOptions{
			Placement:     8,
			Scheduler:     4,
			Failover:      1,
			Rollout:       4,
			WorkGenerator: 16,
			UpdateRun:     1,
			Membership:    4,
		},
	}
}

// AddFlags binds the options to flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path of the hub cluster's kubeconfig (default: in-cluster config or $KUBECONFIG).")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "The hub's own namespace (tokens, tunnel CA, leases).")
	fs.StringVar(&o.HubName, "hub-name", o.HubName, "Name of this hub on member clusters: the placement.flotilla.io/hub annotation of every object agents apply; empty leaves it out.")
	fs.StringVar(&o.ReplicaName, "replica-name", o.ReplicaName, "Name of this hub replica (default: $POD_NAME or the host name).")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "Address of the Prometheus metrics endpoint; 0 disables it.")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "Address of /healthz and /readyz.")
	fs.StringVar(&o.PprofBindAddress, "pprof-bind-address", o.PprofBindAddress, "Address of Go's pprof profiles (/debug/pprof/); 0 disables them.")
	fs.StringVar(&o.TunnelBindAddress, "tunnel-bind-address", o.TunnelBindAddress, "Address agents connect to (TLS).")
	fs.StringVar(&o.TunnelAdvertiseAddress, "tunnel-advertise-address", o.TunnelAdvertiseAddress, "host:port agents are told to dial in join commands (default: derived from --tunnel-bind-address).")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Run the controllers in one replica at a time.")
	fs.DurationVar(&o.LeaderElectionLeaseDuration, "leader-election-lease-duration", o.LeaderElectionLeaseDuration, "Duration of the leader's lease; the leader renews it every third of it, and a standby replica takes over within it when the leader dies.")
	fs.IntVar(&o.HeartbeatMisses, "heartbeat-misses", o.HeartbeatMisses, "Heartbeat periods without a heartbeat after which a member's agent counts as disconnected.")
	fs.DurationVar(&o.DisconnectGrace, "disconnect-grace", o.DisconnectGrace, "How long after an agent's session ended the hub waits for it to reconnect before it reports the member disconnected; 0 reports at once.")
	fs.DurationVar(&o.DefaultToleration, "default-toleration", o.DefaultToleration, "How long a placement stays on a cluster with a NoExecute taint it does not tolerate (e.g. unreachable) before it is moved.")
	fs.DurationVar(&o.EvictionGracefulTimeout, "eviction-graceful-timeout", o.EvictionGracefulTimeout, "How long an evicted placement's resources stay while their replacement is not available yet.")
	fs.Float64Var(&o.EvictionRate, "eviction-rate", o.EvictionRate, "Taint evictions per second across the fleet.")
	fs.IntVar(&o.EvictionBurst, "eviction-burst", o.EvictionBurst, "Taint evictions allowed at once before --eviction-rate paces them.")
	fs.DurationVar(&o.FencingMargin, "fencing-margin", o.FencingMargin, "How long past a fenced placement's lease the hub waits before it counts the copy on a cut-off member as stopped and starts the placement elsewhere.")
	fs.DurationVar(&o.WorkCleanupTimeout, "work-cleanup-timeout", o.WorkCleanupTimeout, "How long a deleted Work waits for its member to confirm its objects are removed.")
	fs.DurationVar(&o.WorkReportWait, "work-report-wait", o.WorkReportWait, "How long a binding's status write waits, after its Work was written, for the agent's report, so that one write says both; 0 writes at once.")
	fs.DurationVar(&o.NewMemberGrace, "new-member-grace", o.NewMemberGrace, "How long after joining a member that has not been healthy yet gets no not-ready taint; 0 taints at once.")
	fs.DurationVar(&o.APIServerTimeout, "apiserver-timeout", o.APIServerTimeout, "How long to wait for the API server at start-up.")
	fs.DurationVar(&o.MemberCertificateLifetime, "member-certificate-lifetime", o.MemberCertificateLifetime, "How long a member certificate is valid; agents renew theirs after two thirds of it.")
	fs.DurationVar(&o.ServingCertificateLifetime, "serving-certificate-lifetime", o.ServingCertificateLifetime, "How long the tunnel's serving certificate is valid; it is reissued after two thirds of it.")
	fs.IntVar(&o.JoinAttemptsPerMinute, "join-attempts-per-minute", o.JoinAttemptsPerMinute, "Join requests one source address may make per minute (and at once).")
	fs.Float64Var(&o.TunnelHeartbeatRate, "tunnel-heartbeat-rate", o.TunnelHeartbeatRate, "Heartbeats per second one agent session may send; faster ones are read later.")
	fs.Float64Var(&o.TunnelStatusRate, "tunnel-status-rate", o.TunnelStatusRate, "Status reports per second one agent session may send; faster ones are read later.")
	fs.IntVar(&o.TunnelMaxConnections, "tunnel-max-connections", o.TunnelMaxConnections, "Most connections the tunnel port holds at once.")
	fs.IntVar(&o.TunnelMaxHandshakes, "tunnel-max-handshakes", o.TunnelMaxHandshakes, "Most tunnel-port connections not authorized yet (TLS or tunnel handshake, join exchange) at once.")
	fs.Float64Var(&o.TunnelAdmissionRate, "tunnel-admission-rate", o.TunnelAdmissionRate, "New tunnel-port connections admitted per second after --tunnel-admission-burst; faster ones are closed before TLS and their agents redial later.")
	fs.IntVar(&o.TunnelAdmissionBurst, "tunnel-admission-burst", o.TunnelAdmissionBurst, "New tunnel-port connections admitted at once before --tunnel-admission-rate paces them.")
	fs.DurationVar(&o.CacheSyncTimeout, "cache-sync-timeout", o.CacheSyncTimeout, "How long the controllers wait for the hub's caches to sync at start-up before the hub exits.")
	fs.DurationVar(&o.ReplicaLeaseDuration, "replica-lease-duration", o.ReplicaLeaseDuration, "How long this replica's Lease lasts (renewed every third of it); the leader records the members of a replica whose Lease expired as disconnected.")
	fs.StringVar(&o.MemoryLimit, "memory-limit", o.MemoryLimit, "The hub container's memory limit, e.g. 2Gi (default: $FLOTILLA_MEMORY_LIMIT, which the Deployment sets from limits.memory); empty when unknown.")
	fs.Float64Var(&o.MemoryLimitRatio, "memory-limit-ratio", o.MemoryLimitRatio, "Share of --memory-limit given to Go as its soft memory limit; 0 leaves it alone. $GOMEMLIMIT, when set, wins.")
	fs.StringVar(&o.ProxyBindAddress, "proxy-bind-address", o.ProxyBindAddress, "Address of the API proxy (aggregated API proxy.flotilla.io, reached through the hub's kube-apiserver); 0 disables it.")
	fs.StringVar(&o.ProxyAdvertiseAddress, "proxy-advertise-address", o.ProxyAdvertiseAddress, "host:port at which the other hub replicas reach this replica's API proxy to forward requests for its members (published on its Lease); empty: $POD_IP with the port of --proxy-bind-address.")
	fs.IntVar(&o.ProxyMaxInflightPerMember, "proxy-max-inflight-per-member", o.ProxyMaxInflightPerMember, "Most proxied requests in flight to one member, watches and exec sessions included; more are refused with 429.")
	fs.DurationVar(&o.ProxyRequestTimeout, "proxy-request-timeout", o.ProxyRequestTimeout, "Longest a proxied request that is not long-running (watch, logs -f, exec, attach, port-forward) may take; a slower one gets 504.")
	fs.IntVar(&o.ProxyMaxInflightPerUser, "proxy-max-inflight-per-user", o.ProxyMaxInflightPerUser, "Most proxied requests one hub user may have in flight over every member; more are refused with 429.")
	fs.Float64Var(&o.ProxyUserQPS, "proxy-user-qps", o.ProxyUserQPS, "Proxied requests a second one hub user may send (with bursts of --proxy-user-burst); faster ones get 429 with Retry-After.")
	fs.IntVar(&o.ProxyUserBurst, "proxy-user-burst", o.ProxyUserBurst, "Burst of proxied requests one hub user may send above --proxy-user-qps.")
	fs.Int64Var(&o.ProxyMaxRequestBytes, "proxy-max-request-bytes", o.ProxyMaxRequestBytes, "Largest proxied request body, in bytes; a larger one gets 413.")
	fs.Int64Var(&o.ProxyMaxResponseBytes, "proxy-max-response-bytes", o.ProxyMaxResponseBytes, "Largest response, in bytes, to a proxied request that is not long-running; a larger one is cut and counted in flotilla_proxy_cut_total.")
	fs.DurationVar(&o.ProxyStreamIdleTimeout, "proxy-stream-idle-timeout", o.ProxyStreamIdleTimeout, "A proxied exec, attach or port-forward that carries nothing for this long is closed.")
	fs.StringVar(&o.ClusterProfileNamespace, "cluster-profile-namespace", o.ClusterProfileNamespace, "Namespace of the ClusterProfile (multicluster.x-k8s.io) the hub publishes for every member when the hub cluster has that CRD; empty publishes none.")
	fs.StringVar(&o.ClusterProfileServer, "cluster-profile-server", o.ClusterProfileServer, "Address of the hub's API server that ClusterProfiles name as the way to reach members (the API proxy's path is added).")
	fs.DurationVar(&o.ProxyMaxStreamDuration, "proxy-max-stream-duration", o.ProxyMaxStreamDuration, "A long-running proxied request (watch, logs -f, exec, attach, port-forward) is ended after this long.")
	fs.StringVar(&o.PrometheusURL, "prometheus-url", o.PrometheusURL, "Base URL of the Prometheus that staged runs' prometheus analysis checks query, e.g. http://prometheus.monitoring:9090; empty: none, and such checks fail their rounds.")
	fs.StringVar(&o.PrometheusBearerTokenFile, "prometheus-bearer-token-file", o.PrometheusBearerTokenFile, "File whose content is sent to --prometheus-url as a bearer token (read for every query); empty sends none.")
	fs.StringVar(&o.PrometheusCAFile, "prometheus-ca-file", o.PrometheusCAFile, "PEM file of the certificate authorities of an https --prometheus-url; empty trusts the system's.")
	fs.DurationVar(&o.PrometheusTimeout, "prometheus-timeout", o.PrometheusTimeout, "Longest one query to --prometheus-url may take; a slower one fails its analysis round.")
	fs.IntVar(&o.Workers.Placement, "placement-workers", o.Workers.Placement, "Placements the placement controller snapshots and reports at once.")
	fs.IntVar(&o.Workers.Scheduler, "scheduler-workers", o.Workers.Scheduler, "Placements the scheduler schedules at once.")
	fs.IntVar(&o.Workers.Failover, "failover-workers", o.Workers.Failover, "Placements whose taint and availability evictions are decided at once.")
	fs.IntVar(&o.Workers.Rollout, "rollout-workers", o.Workers.Rollout, "Placements the rollout controller rolls out at once.")
	fs.IntVar(&o.Workers.WorkGenerator, "workgen-workers", o.Workers.WorkGenerator, "Bindings the work generator turns into Work at once.")
	fs.IntVar(&o.Workers.UpdateRun, "updaterun-workers", o.Workers.UpdateRun, "Staged update runs progressed at once.")
	fs.IntVar(&o.Workers.Membership, "membership-workers", o.Workers.Membership, "Member clusters the membership controller keeps (labels, taints, first conditions) at once.")
}

// Validate reports the first option that cannot work, naming the flag.
func (o *Options) Validate() error {
	if o.Namespace == "" {
		return fmt.Errorf("--namespace must not be empty")
	}
	if len(o.HubName) > 253 {
		return fmt.Errorf("--hub-name must be at most 253 characters, got %d", len(o.HubName))
	}
	if o.ReplicaName == "" {
		return fmt.Errorf("--replica-name must not be empty (set it or $POD_NAME)")
	}
	for flag, addr := range map[string]string{
		"--tunnel-bind-address":       o.TunnelBindAddress,
		"--health-probe-bind-address": o.HealthProbeBindAddress,
	} {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return fmt.Errorf("%s %q is not a host:port address: %w", flag, addr, err)
		}
	}
	if o.MetricsBindAddress != "0" {
		if _, _, err := net.SplitHostPort(o.MetricsBindAddress); err != nil {
			return fmt.Errorf("--metrics-bind-address %q is not a host:port address (or 0 to disable): %w", o.MetricsBindAddress, err)
		}
	}
	if o.PprofBindAddress != "0" {
		if _, _, err := net.SplitHostPort(o.PprofBindAddress); err != nil {
			return fmt.Errorf("--pprof-bind-address %q is not a host:port address (or 0 to disable): %w", o.PprofBindAddress, err)
		}
	}
	if o.TunnelAdvertiseAddress != "" {
		if _, _, err := net.SplitHostPort(o.TunnelAdvertiseAddress); err != nil {
			return fmt.Errorf("--tunnel-advertise-address %q is not a host:port address: %w", o.TunnelAdvertiseAddress, err)
		}
	}
	if o.LeaderElectionLeaseDuration < 2*time.Second {
		return fmt.Errorf("--leader-election-lease-duration must be at least 2s, got %s", o.LeaderElectionLeaseDuration)
	}
	if o.HeartbeatMisses < 1 {
		return fmt.Errorf("--heartbeat-misses must be at least 1, got %d", o.HeartbeatMisses)
	}
	if o.DisconnectGrace < 0 {
		return fmt.Errorf("--disconnect-grace must not be negative (0 reports a disconnection at once), got %s", o.DisconnectGrace)
	}
	if o.DefaultToleration < 0 || o.DefaultToleration%time.Second != 0 {
		// A toleration counts whole seconds (tolerationSeconds): 500ms would
		// silently be 0.
		return fmt.Errorf("--default-toleration must be a whole number of seconds, 0 or more, got %s", o.DefaultToleration)
	}
	if o.EvictionGracefulTimeout < 0 {
		return fmt.Errorf("--eviction-graceful-timeout must not be negative (0 keeps no evicted placement), got %s", o.EvictionGracefulTimeout)
	}
	if o.FencingMargin < time.Second {
		return fmt.Errorf("--fencing-margin must be at least 1s (it covers clock skew and the pods' termination after the agent fenced them), got %s", o.FencingMargin)
	}
	if o.WorkReportWait < 0 || o.WorkReportWait > time.Minute {
		return fmt.Errorf("--work-report-wait must be between 0 (write at once) and 1m, got %s", o.WorkReportWait)
	}
	if o.WorkCleanupTimeout < 0 {
		return fmt.Errorf("--work-cleanup-timeout must not be negative (0 waits for no member), got %s", o.WorkCleanupTimeout)
	}
	if o.EvictionRate <= 0 || o.EvictionBurst < 1 {
		return fmt.Errorf("--eviction-rate must be positive and --eviction-burst at least 1, got %g and %d", o.EvictionRate, o.EvictionBurst)
	}
	if o.NewMemberGrace < 0 {
		return fmt.Errorf("--new-member-grace must not be negative, got %s", o.NewMemberGrace)
	}
	if o.MemberCertificateLifetime < 10*time.Second || o.ServingCertificateLifetime < 10*time.Second {
		return fmt.Errorf("--member-certificate-lifetime and --serving-certificate-lifetime must be at least 10s, got %s and %s", o.MemberCertificateLifetime, o.ServingCertificateLifetime)
	}
	if o.JoinAttemptsPerMinute < 1 {
		return fmt.Errorf("--join-attempts-per-minute must be at least 1, got %d", o.JoinAttemptsPerMinute)
	}
	if o.TunnelHeartbeatRate <= 0 || o.TunnelStatusRate <= 0 {
		return fmt.Errorf("--tunnel-heartbeat-rate and --tunnel-status-rate must be positive, got %g and %g", o.TunnelHeartbeatRate, o.TunnelStatusRate)
	}
	if o.TunnelMaxConnections < 1 || o.TunnelMaxHandshakes < 1 {
		return fmt.Errorf("--tunnel-max-connections and --tunnel-max-handshakes must be at least 1, got %d and %d", o.TunnelMaxConnections, o.TunnelMaxHandshakes)
	}
	if o.TunnelAdmissionRate <= 0 || o.TunnelAdmissionBurst < 1 {
		return fmt.Errorf("--tunnel-admission-rate must be positive and --tunnel-admission-burst at least 1, got %g and %d", o.TunnelAdmissionRate, o.TunnelAdmissionBurst)
	}
	if o.CacheSyncTimeout < time.Second {
		return fmt.Errorf("--cache-sync-timeout must be at least 1s, got %s", o.CacheSyncTimeout)
	}
	if _, err := o.memoryLimitBytes(); err != nil {
		return err
	}
	if o.MemoryLimitRatio < 0 || o.MemoryLimitRatio > 1 {
		return fmt.Errorf("--memory-limit-ratio must be from 0 to 1, got %g", o.MemoryLimitRatio)
	}
	if o.ReplicaLeaseDuration < 3*time.Second {
		return fmt.Errorf("--replica-lease-duration must be at least 3s, got %s", o.ReplicaLeaseDuration)
	}
	for flag, n := range map[string]int{
		"--placement-workers": o.Workers.Placement,
		"--scheduler-workers": o.Workers.Scheduler,
		"--failover-workers":  o.Workers.Failover,
		"--rollout-workers":   o.Workers.Rollout,
		"--workgen-workers":   o.Workers.WorkGenerator,
		"--updaterun-workers": o.Workers.UpdateRun,
	} {
		if n < 1 {
			return fmt.Errorf("%s must be at least 1, got %d", flag, n)
		}
	}
	if o.Workers.Membership < 1 {
		return fmt.Errorf("--membership-workers must be at least 1, got %d", o.Workers.Membership)
	}
	if o.ProxyBindAddress != "0" {
		if _, _, err := net.SplitHostPort(o.ProxyBindAddress); err != nil {
			return fmt.Errorf("--proxy-bind-address %q is not a host:port address (or 0 to disable): %w", o.ProxyBindAddress, err)
		}
	}
	if o.ProxyAdvertiseAddress != "" {
		if _, _, err := net.SplitHostPort(o.ProxyAdvertiseAddress); err != nil {
			return fmt.Errorf("--proxy-advertise-address %q is not a host:port address: %w", o.ProxyAdvertiseAddress, err)
		}
	}
	if o.ProxyMaxInflightPerMember < 1 {
		return fmt.Errorf("--proxy-max-inflight-per-member must be at least 1, got %d", o.ProxyMaxInflightPerMember)
	}
	if o.ProxyRequestTimeout < time.Second {
		return fmt.Errorf("--proxy-request-timeout must be at least 1s, got %s", o.ProxyRequestTimeout)
	}
	if o.ProxyMaxInflightPerUser < 1 {
		return fmt.Errorf("--proxy-max-inflight-per-user must be at least 1, got %d", o.ProxyMaxInflightPerUser)
	}
	if o.ProxyUserQPS <= 0 {
		return fmt.Errorf("--proxy-user-qps must be positive, got %g", o.ProxyUserQPS)
	}
	if o.ProxyUserBurst < 1 {
		return fmt.Errorf("--proxy-user-burst must be at least 1, got %d", o.ProxyUserBurst)
	}
	if o.ProxyMaxRequestBytes < 1<<10 {
		return fmt.Errorf("--proxy-max-request-bytes must be at least 1024, got %d", o.ProxyMaxRequestBytes)
	}
	if o.ProxyMaxResponseBytes < 1<<10 {
		return fmt.Errorf("--proxy-max-response-bytes must be at least 1024, got %d", o.ProxyMaxResponseBytes)
	}
	if o.ProxyStreamIdleTimeout < time.Second {
		return fmt.Errorf("--proxy-stream-idle-timeout must be at least 1s, got %s", o.ProxyStreamIdleTimeout)
	}
	if o.ClusterProfileServer != "" {
		if u, err := url.Parse(o.ClusterProfileServer); err != nil || u.Scheme != "https" || u.Host == "" {
			return fmt.Errorf("--cluster-profile-server %q is not an https:// URL", o.ClusterProfileServer)
		}
	}
	if o.ClusterProfileNamespace != "" {
		if errs := validation.IsDNS1123Label(o.ClusterProfileNamespace); len(errs) > 0 {
			return fmt.Errorf("--cluster-profile-namespace %q is not a namespace name: %s", o.ClusterProfileNamespace, strings.Join(errs, "; "))
		}
	}
	if o.ProxyMaxStreamDuration < time.Second {
		return fmt.Errorf("--proxy-max-stream-duration must be at least 1s, got %s", o.ProxyMaxStreamDuration)
	}
	if err := o.validatePrometheus(); err != nil {
		return err
	}
	if o.APIServerTimeout <= 0 {
		return fmt.Errorf("--apiserver-timeout must be positive, got %s", o.APIServerTimeout)
	}
	return nil
}

// validatePrometheus checks the --prometheus-* flags.
func (o *Options) validatePrometheus() error {
	if o.PrometheusURL == "" {
		if o.PrometheusBearerTokenFile != "" || o.PrometheusCAFile != "" {
			return fmt.Errorf("--prometheus-bearer-token-file and --prometheus-ca-file need --prometheus-url")
		}
		return nil
	}
	if _, err := o.prometheus(); err != nil {
		return fmt.Errorf("--prometheus-url, --prometheus-bearer-token-file or --prometheus-ca-file: %w", err)
	}
	if o.PrometheusTimeout < time.Second {
		return fmt.Errorf("--prometheus-timeout must be at least 1s, got %s", o.PrometheusTimeout)
	}
	return nil
}

// prometheus returns the client of --prometheus-url; nil when it is empty.
func (o *Options) prometheus() (analysis.Prometheus, error) {
	if o.PrometheusURL == "" {
		return nil, nil
	}
	return analysis.NewPrometheus(analysis.PrometheusOptions{
		URL: o.PrometheusURL, BearerTokenFile: o.PrometheusBearerTokenFile, CAFile: o.PrometheusCAFile, Timeout: o.PrometheusTimeout,
	})
}

// memoryLimitBytes is MemoryLimit in bytes; 0 when it is empty.
func (o *Options) memoryLimitBytes() (int64, error) {
	if o.MemoryLimit == "" {
		return 0, nil
	}
	q, err := resource.ParseQuantity(o.MemoryLimit)
	if err != nil || q.Sign() <= 0 {
		return 0, fmt.Errorf("--memory-limit (or $FLOTILLA_MEMORY_LIMIT) %q is not a positive quantity such as 2Gi or 2147483648", o.MemoryLimit)
	}
	return q.Value(), nil
}

// SoftMemoryLimit returns the soft memory limit the hub gives Go: ratio of the
// container's limit, unless $GOMEMLIMIT is set (gomemlimitSet), no limit is
// known or ratio is 0 (then ok is false and Go's limit stays as it is).
func SoftMemoryLimit(containerLimit int64, ratio float64, gomemlimitSet bool) (limit int64, ok bool) {
	if gomemlimitSet || containerLimit <= 0 || ratio <= 0 {
		return 0, false
	}
	return int64(float64(containerLimit) * ratio), true
}

// proxyAdvertiseAddress is where the other replicas reach this replica's API
// proxy (--proxy-advertise-address, or what its default says); "" when the
// proxy is off.
func (o *Options) proxyAdvertiseAddress() string {
	if o.ProxyBindAddress == "0" {
		return ""
	}
	if o.ProxyAdvertiseAddress != "" {
		return o.ProxyAdvertiseAddress
	}
	host, port, err := net.SplitHostPort(o.ProxyBindAddress)
	if err != nil {
		return ""
	}
	if ip := os.Getenv("POD_IP"); ip != "" {
		return net.JoinHostPort(ip, port)
	}
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		return o.ProxyBindAddress
	}
	name, err := os.Hostname()
	if err != nil {
		return ""
	}
	return net.JoinHostPort(name, port)
}
