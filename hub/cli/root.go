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

package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/pkg/version"
)

// NewCommand returns the root command of the kubectl plugin, `kubectl flotilla`.
func NewCommand() *cobra.Command {
	cfg := NewConfig()
	cmd := &cobra.Command{
		Use:   "kubectl-flotilla",
		Short: "Inspect and operate a Flotilla fleet from its hub cluster",
		Long: "Inspect and operate a Flotilla fleet from its hub cluster: why a placement is (not) on a\n" +
			"cluster, which placement put an object on a member, its status as a tree, the fleet at a\n" +
			"glance, what a placement or override would do (plan), approvals of staged update runs,\n" +
			"cordon/uncordon/drain of member clusters, a web console, and a kubeconfig that reaches a\n" +
			"member through the hub. -n selects ResourcePlacements in a namespace.",
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl flotilla"},
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Out, cfg.ErrOut = cmd.OutOrStdout(), cmd.ErrOrStderr()
			_, err := cfg.colored()
			return err
		},
	}
	cfg.AddFlags(cmd.PersistentFlags(), true)
	cfg.AddColorFlag(cmd.PersistentFlags())
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())
	})
	cmd.AddCommand(
		newStatusCommand(cfg),
		newWhyCommand(cfg),
		newWhoPlacedCommand(cfg),
		newClustersCommand(cfg),
		newApproveCommand(cfg),
		NewCordonCommand(cfg),
		NewUncordonCommand(cfg),
		NewDrainCommand(cfg),
		newConsoleCommand(cfg),
		newKubeconfigCommand(cfg),
		newGetCommand(cfg),
		newPlanCommand(cfg),
	)
	version.AddTo(cmd, "kubectl-flotilla")
	return cmd
}

// ClusterCommands returns cordon, uncordon and drain with the kubeconfig flags
// of their own, for a binary that has other commands (the hub's).
func ClusterCommands() []*cobra.Command {
	var out []*cobra.Command
	for _, newCmd := range []func(*Config) *cobra.Command{NewCordonCommand, NewUncordonCommand, NewDrainCommand} {
		cfg := NewConfig()
		cmd := newCmd(cfg)
		cfg.AddFlags(cmd.Flags(), false)
		cmd.PreRun = func(cmd *cobra.Command, _ []string) { cfg.Out, cfg.ErrOut = cmd.OutOrStdout(), cmd.ErrOrStderr() }
		out = append(out, cmd)
	}
	return out
}
