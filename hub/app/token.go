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
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/hub/join"
	"github.com/flotilla-io/flotilla/hub/tunnelserver"
)

// newTokenCommand is `hub token create`: it mints a bootstrap token and prints
// the complete `agent join` command that uses it.
func newTokenCommand() *cobra.Command {
	var kubeconfig, namespace, hubAddress, name, labels, memberKubeconfig string
	var ttl time.Duration
	var anyName, rejoin, hubAsMember bool
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a bootstrap token and print the agent join command that uses it",
		Long: `Create a bootstrap token and print the agent join command that uses it.

A token joins one member: the one --name names (which must be new, unless
--rejoin), or, with --any-name, one member of any name that is not in the
fleet yet. It can never take over an existing member otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			topts := join.TokenOptions{TTL: ttl, Name: name, AnyName: anyName, Rejoin: rejoin}
			if err := topts.Validate(); err != nil {
				return err
			}
			cfg, err := restConfig(kubeconfig)
			if err != nil {
				return err
			}
			c, err := client.New(cfg, client.Options{Scheme: Scheme()})
			if err != nil {
				return fmt.Errorf("failed to create a client: %w", err)
			}
			info := &corev1.ConfigMap{}
			if err := c.Get(cmd.Context(), types.NamespacedName{Namespace: namespace, Name: tunnelserver.InfoConfigMapName}, info); err != nil {
				if apierrors.IsNotFound(err) {
					return fmt.Errorf("the hub has not published its join information in %s/%s yet: is the hub running?", namespace, tunnelserver.InfoConfigMapName)
				}
				return fmt.Errorf("failed to read the hub's join information: %w", err)
			}
			addr := info.Data[tunnelserver.InfoKeyAddress]
			if hubAddress != "" {
				addr = hubAddress
			}
			token, expires, err := join.CreateToken(cmd.Context(), c, namespace, topts)
			if err != nil {
				return err
			}
			args := []string{"agent", "join",
				"--hub", "https://" + strings.TrimPrefix(addr, "https://"),
				"--token", token,
				"--discovery-token-ca-cert-hash", info.Data[tunnelserver.InfoKeyCAHash],
				"--name", valueOr(name, "<member-name>"),
			}
			if labels != "" {
				args = append(args, "--labels", labels)
			}
			if hubAsMember {
				args = append(args, "--hub-as-member")
			}
			args = append(args, "--kubeconfig", valueOr(memberKubeconfig, "<member-kubeconfig>"))
			fmt.Fprintln(cmd.OutOrStdout(), strings.Join(args, " "))
			fmt.Fprintf(os.Stderr, "token expires at %s\n", expires.Format(time.RFC3339))
			return nil
		},
	}
	create.Flags().StringVar(&kubeconfig, "kubeconfig", "", "Kubeconfig of the hub cluster (default: in-cluster config or $KUBECONFIG).")
	create.Flags().StringVar(&namespace, "namespace", "flotilla-system", "The hub's namespace.")
	create.Flags().DurationVar(&ttl, "ttl", 24*time.Hour, "How long the token stays valid.")
	create.Flags().StringVar(&hubAddress, "hub-address", "", "host:port agents dial (default: the address the hub advertises).")
	create.Flags().StringVar(&name, "name", "", "The member name the token may join as (required unless --any-name); the printed command uses it.")
	create.Flags().BoolVar(&anyName, "any-name", false, "The token may join as any name no member has yet (for automation), instead of one --name.")
	create.Flags().BoolVar(&rejoin, "rejoin", false, "The token may re-join the existing member --name: it gets a new certificate and its old one stops working.")
	create.Flags().StringVar(&labels, "labels", "", "Member labels (k=v,k2=v2) to put in the printed command.")
	create.Flags().StringVar(&memberKubeconfig, "member-kubeconfig", "", "Member kubeconfig path to put in the printed command.")
	create.Flags().BoolVar(&hubAsMember, "hub-as-member", false, "Put --hub-as-member in the printed command: the member is the hub cluster itself (compound placements); give the hub cluster's kubeconfig as --member-kubeconfig.")
	token := &cobra.Command{Use: "token", Short: "Manage bootstrap tokens for joining members"}
	token.AddCommand(create)
	return token
}

func valueOr(v, placeholder string) string {
	if v == "" {
		return placeholder
	}
	return v
}
