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

// Package app assembles the hub binary: flags, the controller-runtime manager and
// the subcommands (version, token, and cordon, uncordon and drain from hub/cli).
package app

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/flotilla-io/flotilla/hub/cli"
	"github.com/flotilla-io/flotilla/pkg/version"
)

// NewCommand returns the hub's root command: with no subcommand it runs the hub.
func NewCommand() *cobra.Command {
	opts := NewOptions()
	zapOpts := zap.Options{}
	cmd := &cobra.Command{
		Use:           "hub",
		Short:         "Flotilla hub: schedules placements onto member clusters and serves agent tunnels",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
			if err := opts.Validate(); err != nil {
				return err
			}
			return Run(ctrl.SetupSignalHandler(), opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	goFlags := goFlagSet(&zapOpts)
	cmd.Flags().AddGoFlagSet(goFlags)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())
	})
	version.AddTo(cmd, "hub")
	cmd.AddCommand(newTokenCommand())
	// cordon, uncordon and drain are also `kubectl flotilla` commands (hub/cli).
	cmd.AddCommand(cli.ClusterCommands()...)
	return cmd
}

// restConfig loads the hub cluster's config from --kubeconfig, or the usual chain.
func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("failed to load --kubeconfig %s: %w", kubeconfig, err)
		}
		// As ctrl.GetConfig does: no client-side rate limit (client-go's default,
		// 5 requests a second, would make the pipeline wait on itself); the API
		// server's priority and fairness protects it.
		if cfg.QPS == 0 {
			cfg.QPS = -1
		}
		return cfg, nil
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("failed to find a kubeconfig (not in a cluster, no $KUBECONFIG, no --kubeconfig): %w", err)
	}
	return cfg, nil
}

// checkAPIServer fails fast, with the server's address in the message, when the
// hub cluster cannot be reached: a manager would otherwise retry quietly forever.
func checkAPIServer(ctx context.Context, cfg *rest.Config, timeout time.Duration) error {
	probe := rest.CopyConfig(cfg)
	probe.Timeout = 5 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(probe)
	if err != nil {
		return fmt.Errorf("failed to create a discovery client for %s: %w", cfg.Host, err)
	}
	deadline := time.Now().Add(timeout)
	for {
		_, err = dc.ServerVersion()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cannot reach the Kubernetes API server at %s after %s: %w", cfg.Host, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// Run starts the hub and blocks until ctx ends.
func Run(ctx context.Context, opts *Options) error {
	log := ctrl.Log.WithName("hub")
	setMemoryLimit(log, opts)
	cfg, err := restConfig(opts.Kubeconfig)
	if err != nil {
		return err
	}
	if err := checkAPIServer(ctx, cfg, opts.APIServerTimeout); err != nil {
		return err
	}
	// The leader renews every third of the lease and gives up after two
	// thirds: one write every 10s at the default 30s.
	renew := opts.LeaderElectionLeaseDuration * 2 / 3
	retry := opts.LeaderElectionLeaseDuration / 3
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        Scheme(),
		Metrics:                       metricsserver.Options{BindAddress: opts.MetricsBindAddress},
		HealthProbeBindAddress:        opts.HealthProbeBindAddress,
		PprofBindAddress:              opts.PprofBindAddress,
		LeaderElection:                opts.LeaderElect,
		LeaderElectionID:              "flotilla-hub",
		LeaderElectionNamespace:       opts.Namespace,
		LeaderElectionReleaseOnCancel: true,
		LeaderElectionConfig:          leaseConfig(cfg),
		LeaseDuration:                 &opts.LeaderElectionLeaseDuration,
		RenewDeadline:                 &renew,
		RetryPeriod:                   &retry,
		// No controller reads managedFields: the cache keeps objects without
		// them (a few KiB of every MemberCluster, Work and binding).
		Cache:      cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
		Controller: config.Controller{CacheSyncTimeout: opts.CacheSyncTimeout},
	})
	if err != nil {
		return fmt.Errorf("failed to create the controller manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("failed to add the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("failed to add the readiness check: %w", err)
	}
	if err := setupHub(ctx, mgr, opts); err != nil {
		return err
	}
	log.Info("starting hub", "version", version.Version, "replica", opts.ReplicaName, "apiServer", cfg.Host)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("hub stopped: %w", err)
	}
	return nil
}

// setMemoryLimit gives Go its soft memory limit from the container's
// (Options.MemoryLimitRatio).
func setMemoryLimit(log logr.Logger, opts *Options) {
	container, err := opts.memoryLimitBytes()
	if err != nil {
		return // Validate reported it
	}
	_, gomemlimitSet := os.LookupEnv("GOMEMLIMIT")
	limit, ok := SoftMemoryLimit(container, opts.MemoryLimitRatio, gomemlimitSet)
	if !ok {
		log.V(1).Info("Go's soft memory limit left as it is", "memoryLimit", opts.MemoryLimit, "GOMEMLIMIT", os.Getenv("GOMEMLIMIT"))
		return
	}
	debug.SetMemoryLimit(limit)
	log.Info("Set Go's soft memory limit from the container's", "memoryLimit", opts.MemoryLimit, "ratio", opts.MemoryLimitRatio, "softLimitMiB", limit>>20)
}
