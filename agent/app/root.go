// Package app assembles the agent binary's commands: join, run, leave, version.
package app

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/pkg/version"
)

// NewCommand returns the agent's root command.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:           "agent",
		Short:         "Flotilla agent: joins a member cluster to the hub and applies its Work",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the agent's version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), version.String("agent"))
		},
	})
	return cmd
}
