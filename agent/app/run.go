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
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/flotilla-io/flotilla/agent/apply"
	"github.com/flotilla-io/flotilla/agent/join"
	"github.com/flotilla-io/flotilla/agent/properties"
	"github.com/flotilla-io/flotilla/agent/proxy"
	"github.com/flotilla-io/flotilla/agent/session"
	"github.com/flotilla-io/flotilla/agent/upsync"
	"github.com/flotilla-io/flotilla/pkg/apiproxy"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
	"github.com/flotilla-io/flotilla/pkg/version"
)

// RunOptions are the flags of `agent run`.
type RunOptions struct {
	// Kubeconfig is the member cluster's kubeconfig. Default: in-cluster
	// config or $KUBECONFIG.
	Kubeconfig string
	// MetricsBindAddress serves Prometheus metrics on /metrics; "0" disables.
	// Default ":8090".
	MetricsBindAddress string
	// HealthProbeBindAddress serves /healthz and /readyz; "0" disables.
	// Default ":8091".
	HealthProbeBindAddress string
	// PropertiesInterval is how often the member's properties are
	// collected for heartbeats. Default properties.DefaultInterval.
	PropertiesInterval time.Duration
	// ReconnectMaxInterval caps the delay between attempts to reach the hub.
	// Default tunnel.DefaultReconnectMaxInterval (30s).
	ReconnectMaxInterval time.Duration
	// DenyKinds are kinds the agent never applies, as Kind or Kind.group
	// (e.g. ClusterRoleBinding.rbac.authorization.k8s.io). Default: none.
	DenyKinds []string
	// DenyNamespaces are namespaces the agent never applies into. The agent's
	// own namespace is always denied. Default: none.
	DenyNamespaces []string
	// RBACProfile is the RBAC profile the agent was installed with, from
	// manifests/agent: "full" (default) or "least-privilege".
	RBACProfile string
	// Proxy serves the hub's API proxy: the agent announces the tunnel
	// capability api-proxy and forwards the requests the hub sends to the
	// member's API server, impersonating the hub user. Default true.
	Proxy bool
	// ProxyIdentityPrefix prefixes the hub user and each of its groups when
	// the proxy impersonates them on the member. Default
	// apiproxy.DefaultIdentityPrefix ("flotilla:hub:").
	ProxyIdentityPrefix string
}

// RBAC profiles of manifests/agent.
const (
	RBACProfileFull           = "full"
	RBACProfileLeastPrivilege = "least-privilege"
	// namespacedClusterRole and agentServiceAccount are names the least-privilege
	// profile of manifests/agent installs.
	namespacedClusterRole = "flotilla-agent-namespaced"
	agentServiceAccount   = "flotilla-agent"
)

// NewRunOptions returns the defaults.
func NewRunOptions() *RunOptions {
	return &RunOptions{
		MetricsBindAddress:     ":8090",
		HealthProbeBindAddress: ":8091",
		PropertiesInterval:     properties.DefaultInterval,
		ReconnectMaxInterval:   tunnel.DefaultReconnectMaxInterval,
		RBACProfile:            RBACProfileFull,
		Proxy:                  true,
		ProxyIdentityPrefix:    apiproxy.DefaultIdentityPrefix,
	}
}

// AddFlags adds the flags of `agent run` to fs.
func (o *RunOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Kubeconfig of the member cluster (default: in-cluster config or $KUBECONFIG).")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, `Address to serve Prometheus metrics on (/metrics); "0" disables.`)
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, `Address to serve /healthz and /readyz on; "0" disables.`)
	fs.StringSliceVar(&o.DenyKinds, "deny-kinds", o.DenyKinds, "Kinds the agent never applies, as Kind (core group) or Kind.group, comma-separated; such manifests fail with a message naming this flag.")
	fs.StringSliceVar(&o.DenyNamespaces, "deny-namespaces", o.DenyNamespaces, "Namespaces the agent never applies into, comma-separated (its own namespace, and a hub's flotilla-system and flotilla-member-* namespaces, are always refused).")
	fs.StringVar(&o.RBACProfile, "rbac-profile", o.RBACProfile, `RBAC profile the agent was installed with (manifests/agent): "full", or "least-privilege", where the agent binds itself, in every namespace it applies, to ClusterRole `+namespacedClusterRole+` and watches namespace by namespace.`)
	fs.DurationVar(&o.PropertiesInterval, "properties-interval", o.PropertiesInterval, "How often to collect the member cluster's properties (node count, capacity, ...) for heartbeats.")
	fs.BoolVar(&o.Proxy, "proxy", o.Proxy, "Serve the hub's API proxy: hub users reach this member's API server through the tunnel, as themselves under --proxy-identity-prefix, with this member's RBAC deciding (docs/how-to/reach-members.md). false refuses it.")
	fs.StringVar(&o.ProxyIdentityPrefix, "proxy-identity-prefix", o.ProxyIdentityPrefix, "Prefix of the user and groups the API proxy impersonates for a hub user (hub user alice is User "+apiproxy.DefaultIdentityPrefix+"alice here).")
	fs.DurationVar(&o.ReconnectMaxInterval, "reconnect-max-interval", o.ReconnectMaxInterval, "Longest delay between attempts to reach the hub (the delay doubles from 500ms, with jitter).")
}

// Validate checks the flags.
func (o *RunOptions) Validate() error {
	for _, a := range []struct{ flag, value string }{
		{"--metrics-bind-address", o.MetricsBindAddress},
		{"--health-probe-bind-address", o.HealthProbeBindAddress},
	} {
		if a.value == "0" {
			continue
		}
		if _, _, err := net.SplitHostPort(a.value); err != nil {
			return fmt.Errorf("%s %q is not HOST:PORT, :PORT or 0 (disabled)", a.flag, a.value)
		}
	}
	if o.RBACProfile != RBACProfileFull && o.RBACProfile != RBACProfileLeastPrivilege {
		return fmt.Errorf("--rbac-profile %q is neither %s nor %s", o.RBACProfile, RBACProfileFull, RBACProfileLeastPrivilege)
	}
	if _, err := o.deniedKinds(); err != nil {
		return err
	}
	if o.Proxy {
		if err := apiproxy.ValidateIdentityPrefix(o.ProxyIdentityPrefix); err != nil {
			return fmt.Errorf("--proxy-identity-prefix %w", err)
		}
	}
	if o.PropertiesInterval < time.Second {
		return fmt.Errorf("--properties-interval %s is too short: at least 1s", o.PropertiesInterval)
	}
	if o.ReconnectMaxInterval < tunnel.DefaultReconnectInitialInterval {
		return fmt.Errorf("--reconnect-max-interval %s is too short: at least %s", o.ReconnectMaxInterval, tunnel.DefaultReconnectInitialInterval)
	}
	return nil
}

// deniedKinds parses DenyKinds.
func (o *RunOptions) deniedKinds() ([]schema.GroupKind, error) {
	out := make([]schema.GroupKind, 0, len(o.DenyKinds))
	for _, k := range o.DenyKinds {
		gk := schema.ParseGroupKind(strings.TrimSpace(k))
		if gk.Kind == "" {
			return nil, fmt.Errorf("--deny-kinds %q is not Kind or Kind.group", k)
		}
		out = append(out, gk)
	}
	return out, nil
}

func newRunCommand() *cobra.Command {
	opts := NewRunOptions()
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Connect to the hub and apply the Work it sends (after `agent join`)",
		Long: `Run keeps one tunnel to the hub, with the identity that ` + "`agent join`" + ` stored on
the member cluster: it heartbeats with the cluster's properties, applies the Work
the hub sends, reports its status, and reconnects with backoff when the tunnel
drops. SIGTERM closes the tunnel cleanly.

Unless the environment sets them, it runs with ` + fmt.Sprintf("GOMEMLIMIT=%dMiB (a soft limit) and GOGC=%d", DefaultMemoryLimit>>20, DefaultGCPercent) + `,
which keep an idle agent small.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Validate(); err != nil {
				return err
			}
			if set := runtimeDefaults(os.LookupEnv); len(set) > 0 {
				ctrllog.Log.WithName("agent").V(1).Info("Go runtime defaults set (the environment may override them)", "set", set)
			}
			// SIGTERM or SIGINT stops the agent cleanly; a second one kills it.
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			context.AfterFunc(ctx, stop)
			return Run(ctx, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

// Run runs the agent until ctx is done.
func Run(ctx context.Context, opts *RunOptions) error {
	log := ctrllog.Log.WithName("agent")
	cfg, err := restConfig(opts.Kubeconfig)
	if err != nil {
		return err
	}
	id, err := join.LoadIdentity(ctx, cfg)
	if err != nil {
		return err
	}
	if _, err := id.TLSConfig(tunnel.ALPNTunnel); err != nil {
		return err
	}
	log = log.WithValues("member", id.Name)

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	tunnelMetrics, err := tunnel.NewMetrics(reg)
	if err != nil {
		return err
	}
	sessionMetrics, err := session.NewMetrics(reg)
	if err != nil {
		return err
	}
	if err := apply.Register(reg); err != nil {
		return err
	}
	renewMetrics, err := join.NewRenewMetrics(reg)
	if err != nil {
		return err
	}

	deniedKinds, err := opts.deniedKinds()
	if err != nil {
		return err
	}
	var leastPrivilege *apply.LeastPrivilege
	if opts.RBACProfile == RBACProfileLeastPrivilege {
		leastPrivilege = &apply.LeastPrivilege{ClusterRole: namespacedClusterRole, ServiceAccountNamespace: join.Namespace, ServiceAccountName: agentServiceAccount}
	}
	// The Applier reports changes of what it applied to the runner, created below.
	var runner *session.Runner
	applier, err := apply.New(cfg, apply.Options{
		Namespace:        join.Namespace,
		DeniedKinds:      deniedKinds,
		DeniedNamespaces: opts.DenyNamespaces,
		LeastPrivilege:   leastPrivilege,
		OnHub:            id.HubAsMember,
		OnChange:         func(work string) { runner.Changed(work) },
	})
	if err != nil {
		return err
	}
	defer applier.Close()
	collector, err := properties.New(cfg, properties.Options{Interval: opts.PropertiesInterval, Logger: log.WithName("properties")})
	if err != nil {
		return err
	}
	// Upsync mirrors objects born on a member to the hub; on the hub joined as a
	// member they are on the hub already, and mirroring them onto themselves would
	// make the hub and its agent write the same objects in turn.
	var upsyncer session.Upsyncer
	if !id.HubAsMember {
		u, err := newUpsyncer(cfg, func(m tunnel.Upsync) error { return runner.SendUpsync(m) }, log.WithName("upsync"))
		if err != nil {
			return err
		}
		defer u.Close()
		upsyncer = u
	}
	capabilities := session.Capabilities
	var apiProxy session.APIProxyServer
	if opts.Proxy {
		h, err := proxy.New(cfg, proxy.Options{IdentityPrefix: opts.ProxyIdentityPrefix, Logger: log.WithName("proxy")})
		if err != nil {
			return err
		}
		apiProxy = h
		capabilities = append(slices.Clone(capabilities), tunnel.CapabilityAPIProxy)
	}
	runner, err = session.New(session.Options{
		APIProxy:       apiProxy,
		Applier:        applier,
		Properties:     collector,
		Metrics:        sessionMetrics,
		ChangesWatched: true,
		Upsync:         upsyncer,
		Logger:         log.WithName("session"),
	})
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	servers := []struct {
		name, flag, addr string
		handler          http.Handler
	}{
		{"metrics", "--metrics-bind-address", opts.MetricsBindAddress, metricsHandler(reg)},
		{"health probes", "--health-probe-bind-address", opts.HealthProbeBindAddress, healthHandler()},
	}
	errc := make(chan error, len(servers))
	for _, s := range servers {
		if s.addr == "0" || s.addr == "" {
			continue
		}
		l, err := net.Listen("tcp", s.addr)
		if err != nil {
			return fmt.Errorf("cannot serve %s on %s: %w: pick another address with %s", s.name, s.addr, err, s.flag)
		}
		log.Info("Serving "+s.name, "address", l.Addr().String())
		go func() {
			if err := serveHTTP(ctx, l, s.handler); err != nil {
				errc <- err
			}
		}()
	}

	go collector.Run(ctx)

	// The certificate is renewed after two thirds of its lifetime; the
	// session then redials with the new one.
	renewer := &join.Renewer{Member: cfg, Metrics: renewMetrics, Log: log.WithName("certificate"),
		OnRenewed: func(*join.Identity) { runner.Redial("the agent renewed its certificate") }}
	go func() {
		if err := renewer.Run(ctx, id); err != nil {
			log.Error(err, "Certificate renewal stopped")
		}
	}()
	dial := func(ctx context.Context) (*tunnel.ClientSession, error) {
		current := renewer.Current()
		if current == nil {
			current = id
		}
		tlsConfig, err := current.TLSConfig(tunnel.ALPNTunnel)
		if err != nil {
			return nil, err
		}
		s, err := tunnel.Dial(ctx, tunnel.DialOptions{
			Address:   current.Hub,
			TLSConfig: tlsConfig,
			ClientOptions: tunnel.ClientOptions{
				Hello:    tunnel.Hello{ClusterName: id.Name, AgentVersion: version.Version, Capabilities: capabilities},
				CheckHub: session.CheckHub(version.Version, log.WithName("tunnel")),
				Metrics:  tunnelMetrics,
				Logger:   log.WithName("tunnel"),
			},
		})
		if err != nil && session.Permanent(err) {
			// Redialing the same hub cannot help (VERSIONING.md): stop
			// with the one line that says what to upgrade.
			return nil, backoff.Permanent(err)
		}
		return s, err
	}
	log.Info("Starting the agent", "version", version.Version, "hub", id.Hub, "apiServer", cfg.Host, "hubAsMember", id.HubAsMember)
	runErr := make(chan error, 1)
	go func() {
		runErr <- runner.Run(ctx, dial, tunnel.ReconnectOptions{Logger: log.WithName("tunnel"), MaxInterval: opts.ReconnectMaxInterval})
	}()
	select {
	case err := <-runErr:
		cancel()
		if err != nil {
			return fmt.Errorf("the agent stopped: %w", err)
		}
		log.Info("The agent stopped")
		return nil
	case err := <-errc:
		cancel()
		<-runErr //nolint:errcheck // waiting for the run to stop; err is why it was stopped
		return err
	}
}

func metricsHandler(reg *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	return mux
}

func healthHandler() http.Handler {
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }
	mux.HandleFunc("/healthz", ok)
	mux.HandleFunc("/readyz", ok)
	return mux
}

// serveHTTP serves on l until ctx is done.
func serveHTTP(ctx context.Context, l net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	stop := context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	})
	defer stop()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("the HTTP server on %s failed: %w", l.Addr(), err)
	}
	return nil
}

// newUpsyncer returns the agent's upsync, with its own dynamic client and
// discovery of the member.
func newUpsyncer(cfg *rest.Config, send upsync.Sender, log logr.Logger) (*upsync.Syncer, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create the dynamic client of the member cluster: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create the discovery client of the member cluster: %w", err)
	}
	return upsync.New(dyn, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)), send, log), nil
}
