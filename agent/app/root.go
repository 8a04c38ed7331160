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

// Package app assembles the agent binary's commands: join, run, leave, version.
package app

import (
	"flag"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/flotilla-io/flotilla/pkg/version"
)

// NewCommand returns the agent's root command.
func NewCommand() *cobra.Command {
	zapOpts := zap.Options{}
	cmd := &cobra.Command{
		Use:           "agent",
		Short:         "Flotilla agent: joins a member cluster to the hub and applies its Work",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(*cobra.Command, []string) {
			ctrllog.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
		},
	}
	logFlags := flag.NewFlagSet("agent", flag.ContinueOnError)
	zapOpts.BindFlags(logFlags)
	cmd.PersistentFlags().AddGoFlagSet(logFlags)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())
	})
	cmd.AddCommand(
		newJoinCommand(),
		newRunCommand(),
		newLeaveCommand(),
	)
	version.AddTo(cmd, "agent")
	return cmd
}

// restConfig loads the member cluster's config from --kubeconfig, or the
// usual chain (in-cluster config, $KUBECONFIG, ~/.kube/config).
func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("cannot load --kubeconfig %s: %w", kubeconfig, err)
		}
		// As config.GetConfig does: no client-side rate limit (client-go's default
		// of 5 requests a second makes each apply wait); the member API server's
		// priority and fairness protects it.
		if cfg.QPS == 0 {
			cfg.QPS = -1
		}
		return cfg, nil
	}
	cfg, err := config.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("no member kubeconfig (not in a cluster, no $KUBECONFIG): pass --kubeconfig: %w", err)
	}
	return cfg, nil
}
