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

// Command localfleet brings up a whole Flotilla fleet on one machine: kwok clusters
// for the hub and its members, the hub installed from manifests/hub and run with
// its ServiceAccount's token, and (once joined) an agent per member. With
// --provider kind the clusters are kind nodes in podman and the hub and agents
// run as pods of the images built from this checkout.
//
//	go run ./tools/localfleet up --members 3 [--labels member-1=env=dev,zone=eu] [--hub-replicas 2]
//	go run ./tools/localfleet up --prometheus
//	go run ./tools/localfleet up --provider kind --members 1
//	go run ./tools/localfleet down
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/tools/localfleet/balancer"
	"github.com/flotilla-io/flotilla/tools/localfleet/fleet"
)

func main() {
	// Interrupting `up` still cleans up: the context ends and Up removes what it made.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newCommand().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "localfleet: %v\n", err)
		os.Exit(1)
	}
}

func newCommand() *cobra.Command {
	var dir string
	root := &cobra.Command{
		Use:           "localfleet",
		Short:         "Run a local Flotilla fleet on kwok clusters",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&dir, "dir", "", "Folder for the fleet's files (default: .localfleet in the repository)")
	var provider string

	var members, hubReplicas int
	var labels, hubArgs []string
	var hubAsMember, hubChart, tunnelBalancer, withPrometheus bool
	up := &cobra.Command{
		Use:   "up",
		Short: "Create the hub and member clusters, install and start the hub",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			memberLabels, err := parseLabels(labels)
			if err != nil {
				return err
			}
			f, err := fleet.New(fleet.Options{Dir: dir, Members: members, MemberLabels: memberLabels, HubReplicas: hubReplicas, HubArgs: hubArgs, Provider: provider, HubAsMember: hubAsMember, HubFromChart: hubChart, TunnelBalancer: tunnelBalancer, Prometheus: withPrometheus})
			if err != nil {
				return err
			}
			return f.Up(cmd.Context())
		},
	}
	up.Flags().IntVar(&members, "members", 3, "Number of member clusters (member-1..N)")
	up.Flags().StringArrayVar(&labels, "labels", nil, "Labels of a member, as member-1=env=dev,zone=eu (repeatable)")
	up.Flags().IntVar(&hubReplicas, "hub-replicas", 1, "Number of hub processes; with more than one, agents reach them through a TCP balancer")
	up.Flags().BoolVar(&tunnelBalancer, "tunnel-balancer", false, "Put the TCP balancer in front of the hub even with one replica, so that `localfleet block MEMBER` can partition a member; kwok only")
	up.Flags().StringArrayVar(&hubArgs, "hub-arg", nil, "An extra flag for every hub process, as --hub-arg=--member-certificate-lifetime=1m (repeatable)")
	up.Flags().BoolVar(&hubAsMember, "hub-as-member", false, "Also join the hub cluster itself as member \"hub\" (agent join --hub-as-member), for compound placements; kwok only")
	up.Flags().BoolVar(&hubChart, "hub-chart", false, "Install the hub with its Helm chart (charts/flotilla-hub) instead of manifests/hub; kind only")
	up.Flags().BoolVar(&withPrometheus, "prometheus", false, "Run the prometheus on PATH (make prometheus installs it) beside the fleet, scraping the hub and the agents every second, and start the hub with --prometheus-url; kwok only")
	up.Flags().StringVar(&provider, "provider", fleet.ProviderKwok, "Clusters to run: kwok (fake nodes, local hub and agents) or kind (podman nodes from the node image; hub and agents as pods)")

	down := &cobra.Command{
		Use:   "down",
		Short: "Remove every process, cluster and file the fleet made (safe to repeat)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := fleet.New(fleet.Options{Dir: dir})
			if err != nil {
				return err
			}
			if err := f.Down(cmd.Context()); err != nil {
				return err
			}
			fmt.Println("fleet is down")
			return nil
		},
	}
	demo := &cobra.Command{
		Use:   "demo",
		Short: "Bring the fleet up if needed, place manifests/samples and show the status",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := fleet.New(fleet.Options{Dir: dir, Members: members, Provider: provider})
			if err != nil {
				return err
			}
			return f.Demo(cmd.Context())
		},
	}
	demo.Flags().IntVar(&members, "members", 3, "Number of member clusters when the fleet must be created")
	demo.Flags().StringVar(&provider, "provider", fleet.ProviderKwok, "Clusters to run when the fleet must be created: kwok or kind")

	agent := &cobra.Command{Use: "agent", Short: "Stop or start one member's agent (fault tests)"}
	for _, verb := range []string{"stop", "start"} {
		agent.AddCommand(&cobra.Command{
			Use:   verb + " MEMBER",
			Short: strings.ToUpper(verb[:1]) + verb[1:] + " the agent of a member",
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				f, err := fleet.New(fleet.Options{Dir: dir})
				if err != nil {
					return err
				}
				if verb == "stop" {
					err = f.StopAgent(cmd.Context(), args[0])
				} else {
					err = f.StartAgent(cmd.Context(), args[0])
				}
				if err != nil {
					return err
				}
				fmt.Printf("agent of %s %s\n", args[0], map[string]string{"stop": "stopped", "start": "started"}[verb])
				return nil
			},
		})
	}
	partition := func(verb, short string, do func(context.Context, balancer.Client, string) (string, error)) *cobra.Command {
		return &cobra.Command{
			Use:   verb + " MEMBER",
			Short: short,
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				f, err := fleet.New(fleet.Options{Dir: dir})
				if err != nil {
					return err
				}
				lb, err := f.Balancer()
				if err != nil {
					return err
				}
				out, err := do(cmd.Context(), lb, args[0])
				if err != nil {
					return err
				}
				fmt.Println(out)
				return nil
			},
		}
	}
	block := partition("block", "Partition a member from the hub at the tunnel balancer while its agent runs (fault tests)",
		func(ctx context.Context, lb balancer.Client, m string) (string, error) {
			n, err := lb.Block(ctx, m)
			return fmt.Sprintf("%s blocked: %d connections reset, new ones held", m, n), err
		})
	unblock := partition("unblock", "End a member's partition: its agent reaches the hub again",
		func(ctx context.Context, lb balancer.Client, m string) (string, error) {
			return m + " unblocked", lb.Unblock(ctx, m)
		})
	root.AddCommand(up, down, demo, agent, block, unblock, newBalanceCommand())
	return root
}

// parseLabels turns ["member-1=env=dev,zone=eu"] into {"member-1": {"env": "dev", "zone": "eu"}}.
func parseLabels(flags []string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, flag := range flags {
		member, rest, ok := strings.Cut(flag, "=")
		if !ok || member == "" || rest == "" {
			return nil, fmt.Errorf("--labels %q: want MEMBER=key=value[,key=value]", flag)
		}
		if out[member] == nil {
			out[member] = map[string]string{}
		}
		for _, kv := range strings.Split(rest, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("--labels %q: %q is not key=value", flag, kv)
			}
			out[member][k] = v
		}
	}
	return out, nil
}

// newBalanceCommand is the tunnel balancer the fleet runs in front of several
// hub replicas (tools/localfleet/balancer); `up` starts it.
func newBalanceCommand() *cobra.Command {
	var listen, control string
	var backends []string
	cmd := &cobra.Command{
		Use:    "balance",
		Short:  "Forward TCP connections to the hub replicas (run by `up`)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if listen == "" || control == "" || len(backends) == 0 {
				return fmt.Errorf("--listen, --control and at least one --backend are required")
			}
			b := balancer.New(backends)
			l, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			cl, err := net.Listen("tcp", control)
			if err != nil {
				return err
			}
			srv := &http.Server{Handler: b.Handler(), ReadHeaderTimeout: 5 * time.Second}
			go func() { _ = srv.Serve(cl) }()
			defer srv.Close()
			fmt.Printf("balancing %s over %v; control on %s\n", listen, backends, control)
			return b.Serve(cmd.Context(), l)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "host:port agents dial")
	cmd.Flags().StringVar(&control, "control", "", "host:port of the control endpoint (cut, delay, backends)")
	cmd.Flags().StringArrayVar(&backends, "backend", nil, "host:port of a hub replica's tunnel port (repeatable)")
	return cmd
}
