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
	"time"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/agent/apply"
	"github.com/flotilla-io/flotilla/agent/join"
)

func newLeaveCommand() *cobra.Command {
	var kubeconfig string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "leave",
		Short: "Remove what the agent applied on this member cluster and leave the fleet",
		Long: `Leave removes every object the agent applied on the member cluster, tells the
hub to forget the member (over mutual TLS, with the member's certificate) and
deletes the agent's identity. Stop ` + "`agent run`" + ` first. If the hub cannot be
reached, the member is still cleaned up; then delete the MemberCluster on the
hub by hand.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := restConfig(kubeconfig)
			if err != nil {
				return err
			}
			applier, err := apply.New(cfg, apply.Options{Namespace: join.Namespace})
			if err != nil {
				return err
			}
			res, err := join.Leave(cmd.Context(), join.LeaveOptions{Member: cfg, Remover: applier, Timeout: timeout})
			if err != nil {
				// A *join.HubNotToldError says the member was cleaned up
				// and what to do on the hub.
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Member %q left the hub at %s: removed %d Work(s) and the agent's identity from this cluster.\n",
				res.Identity.Name, res.Identity.Hub, len(res.Removed))
			for _, r := range res.Released {
				fmt.Fprintf(cmd.OutOrStdout(), "Kept %s\n", r)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "Kubeconfig of the member cluster (default: in-cluster config or $KUBECONFIG).")
	cmd.Flags().DurationVar(&timeout, "timeout", join.DefaultTimeout, "How long to wait for the hub.")
	return cmd
}
