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
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/agent/install"
)

// installFlags are `agent join`'s flags for running the agent in the member.
type installFlags struct {
	enabled   bool
	printHelm bool
	image     string
	profile   string
	timeout   time.Duration
}

func (f *installFlags) bind(fs *pflag.FlagSet) {
	fs.BoolVar(&f.enabled, "install", false, "After joining, run the agent in the member cluster: apply manifests/agent (built into this binary) and wait until the agent pod runs.")
	fs.BoolVar(&f.printHelm, "print-helm", false, "After joining, print the helm command that installs the agent as --install would (chart charts/flotilla-agent), instead of installing it.")
	fs.StringVar(&f.image, "image", "", "Agent image for --install or --print-helm (default: the image manifests/agent names).")
	fs.StringVar(&f.profile, "rbac-profile", install.ProfileFull, `RBAC profile --install applies (or --print-helm names): "full" (manifests/agent) or "least-privilege" (manifests/agent/least-privilege).`)
	fs.DurationVar(&f.timeout, "install-timeout", install.DefaultTimeout, "How long --install waits for the agent pod to run.")
}

// helmCommand is the command --print-helm prints, checked before joining; "" without
// --print-helm.
func (f installFlags) helmCommand(kubeconfig string) (string, error) {
	if !f.printHelm {
		return "", nil
	}
	if f.enabled {
		return "", fmt.Errorf("--install and --print-helm: choose one (--install installs the agent, --print-helm prints the helm command that would)")
	}
	return install.HelmCommand(f.image, f.profile, kubeconfig)
}

// runInstall installs the agent after a join.
func runInstall(cmd *cobra.Command, cfg *rest.Config, f installFlags) error {
	res, err := install.Install(cmd.Context(), install.Options{Member: cfg, Image: f.image, Profile: f.profile, Timeout: f.timeout})
	if err != nil {
		return fmt.Errorf("the member joined, but the agent was not installed: %w", err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "Installed the agent (%s): pod %s/%s runs and connects to the hub with that identity.\n",
		res.Image, "flotilla-system", res.Pod)
	return nil
}
