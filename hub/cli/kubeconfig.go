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
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/apiproxy"
)

// newKubeconfigCommand is `kubeconfig <cluster>`: a kubeconfig that reaches
// a member through the hub's API proxy.
func newKubeconfigCommand(cfg *Config) *cobra.Command {
	return &cobra.Command{
		Use:   "kubeconfig <cluster>",
		Short: "Print a kubeconfig that reaches a member cluster through the hub (API proxy), with your hub credentials",
		Long: `Print a kubeconfig whose one context, flotilla-<cluster>, reaches the member cluster's
API server through the hub's API proxy: its server is the hub's API server followed by
` + apiproxy.PathPrefix("<cluster>") + `, with the hub cluster's certificate
authority and your hub credentials (the current context's, as they are: files stay
files). Any tool that reads a kubeconfig then works on the member:

  kubectl flotilla kubeconfig member-1 > member-1.kubeconfig
  kubectl --kubeconfig member-1.kubeconfig get pods -A

The hub lets you through when you may get memberclusters/proxy of proxy.flotilla.io
(named after the member); on the member you are User flotilla:hub:<you> (the agent's
--proxy-identity-prefix), with what the member's RBAC grants that user and your groups.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			member := args[0]
			raw, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(cfg.loading, cfg.overrides).RawConfig()
			if err != nil {
				return fmt.Errorf("failed to load a kubeconfig for the hub cluster: %w", err)
			}
			contextName := raw.CurrentContext
			if cfg.overrides.CurrentContext != "" {
				contextName = cfg.overrides.CurrentContext
			}
			out, err := MemberKubeconfig(raw, contextName, member)
			if err != nil {
				return err
			}
			cl, err := cfg.Client()
			if err != nil {
				return err
			}
			if err := cl.Get(cmd.Context(), types.NamespacedName{Name: member}, &clusterv1beta1.MemberCluster{}); err != nil {
				if apierrors.IsNotFound(err) {
					return fmt.Errorf("member cluster %q does not exist on this hub: `kubectl flotilla clusters` lists them", member)
				}
				return fmt.Errorf("failed to read member cluster %q: %w", member, err)
			}
			b, err := clientcmd.Write(out)
			if err != nil {
				return fmt.Errorf("failed to write the kubeconfig: %w", err)
			}
			_, err = cfg.Out.Write(b)
			return err
		},
	}
}

// MemberKubeconfig returns a kubeconfig with one context, flotilla-<member>,
// that reaches member through the hub's API proxy: contextName's cluster
// with the proxy path of member appended to its server, and contextName's
// user (credentials as they are) and namespace.
func MemberKubeconfig(raw clientcmdapi.Config, contextName, member string) (clientcmdapi.Config, error) {
	ctx, ok := raw.Contexts[contextName]
	if !ok || contextName == "" {
		return clientcmdapi.Config{}, fmt.Errorf("the kubeconfig has no context %q: pick one with --context", contextName)
	}
	hub, ok := raw.Clusters[ctx.Cluster]
	if !ok {
		return clientcmdapi.Config{}, fmt.Errorf("context %q names cluster %q, which the kubeconfig does not define", contextName, ctx.Cluster)
	}
	user, ok := raw.AuthInfos[ctx.AuthInfo]
	if !ok {
		return clientcmdapi.Config{}, fmt.Errorf("context %q names user %q, which the kubeconfig does not define", contextName, ctx.AuthInfo)
	}
	name := "flotilla-" + member
	cluster := hub.DeepCopy()
	cluster.LocationOfOrigin = ""
	cluster.Server = strings.TrimSuffix(hub.Server, "/") + apiproxy.PathPrefix(member)
	auth := user.DeepCopy()
	auth.LocationOfOrigin = ""
	return clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{name: cluster},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{ctx.AuthInfo: auth},
		Contexts:       map[string]*clientcmdapi.Context{name: {Cluster: name, AuthInfo: ctx.AuthInfo, Namespace: ctx.Namespace}},
		CurrentContext: name,
	}, nil
}
