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

	"github.com/flotilla-io/flotilla/agent/join"
)

func newJoinCommand() *cobra.Command {
	var hub, token, caHash, name, labels, kubeconfig string
	var timeout time.Duration
	var hubAsMember bool
	var inst installFlags
	cmd := &cobra.Command{
		Use:   "join",
		Short: "Join this member cluster to the hub with a bootstrap token",
		Long: `Join generates the agent's key on the member cluster (the private key never
leaves it), asks the hub for a certificate with a bootstrap token from
` + "`hub token create`" + `, checking the hub's CA against
--discovery-token-ca-cert-hash, and stores the identity in Secret
flotilla-system/flotilla-agent-identity on the member cluster. Then run
` + "`agent run`" + `, or install the agent in the member: --install applies
manifests/agent, --print-helm prints the helm command that installs its chart.

With --hub-as-member, the cluster is the hub itself (pass the hub cluster's
kubeconfig), so that placements can place placements (compound placements). Join
checks that the cluster publishes the hub's CA hash; the hub labels the member
cluster.flotilla.io/hub=true and taints it cluster.flotilla.io/hub:NoSchedule, so
only placements that tolerate the taint land there; and the agent there never
takes over an object no Work applied.`,
		Example: `  agent join --hub https://hub.example.com:8443 --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash sha256:<hex> --name member-1 --labels env=dev,zone=eu \
    --kubeconfig member-1.kubeconfig`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			helm, err := inst.helmCommand(kubeconfig)
			if err != nil {
				return err
			}
			opts := join.Options{Hub: hub, Token: token, CACertHash: caHash, Name: name, Timeout: timeout, HubAsMember: hubAsMember}
			parsed, err := join.ParseLabels(labels)
			if err != nil {
				return err
			}
			opts.Labels = parsed
			// Everything that can be checked locally is, before the member
			// or the hub are contacted.
			if err := opts.Validate(); err != nil {
				return err
			}
			cfg, err := restConfig(kubeconfig)
			if err != nil {
				return err
			}
			opts.Member = cfg
			id, err := join.Join(cmd.Context(), opts)
			if err != nil {
				return err
			}
			next := "agent run"
			if kubeconfig != "" {
				next += " --kubeconfig " + kubeconfig
			}
			if helm != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "Joined the cluster at %s to the hub at %s as member %q; its identity is in Secret %s/%s. Install the agent with its chart (from a Flotilla checkout):\n%s\n",
					cfg.Host, id.Hub, id.Name, join.Namespace, join.SecretName, helm)
				return nil
			}
			if inst.enabled {
				fmt.Fprintf(cmd.OutOrStdout(), "Joined the cluster at %s to the hub at %s as member %q; its identity is in Secret %s/%s.\n",
					cfg.Host, id.Hub, id.Name, join.Namespace, join.SecretName)
				return runInstall(cmd, cfg, inst)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Joined the cluster at %s to the hub at %s as member %q; its identity is in Secret %s/%s. Next: %s\n",
				cfg.Host, id.Hub, id.Name, join.Namespace, join.SecretName, next)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&hub, "hub", "", "The hub's tunnel address, https://HOST:PORT (required).")
	fs.StringVar(&token, "token", "", "Bootstrap token from `hub token create`, <id>.<secret> (required).")
	fs.StringVar(&caHash, "discovery-token-ca-cert-hash", "", "sha256:<hex> of the hub CA's public key, to trust the hub by (required).")
	fs.StringVar(&name, "name", "", "This member cluster's name in the fleet (required).")
	fs.StringVar(&labels, "labels", "", "Labels of the member cluster in the fleet, k=v,k2=v2.")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "Kubeconfig of the member cluster (default: in-cluster config or $KUBECONFIG).")
	fs.DurationVar(&timeout, "timeout", join.DefaultTimeout, "How long to wait for the hub.")
	fs.BoolVar(&hubAsMember, "hub-as-member", false, "The cluster is the hub itself (--kubeconfig of the hub cluster): join it as a member for compound placements; it is labelled cluster.flotilla.io/hub=true and tainted cluster.flotilla.io/hub:NoSchedule.")
	inst.bind(fs)
	return cmd
}
