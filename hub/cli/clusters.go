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
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/replica"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

func newClustersCommand(cfg *Config) *cobra.Command {
	var selector string
	cmd := &cobra.Command{
		Use:   "clusters",
		Short: "Show the fleet at a glance: health, taints, agent version, last seen, placements held",
		Long: "Show every member cluster: its state (Healthy, Unhealthy, Disconnected, Joining, Leaving),\n" +
			"its taints, its agent's version, when the hub last heard from it, and how many placements it\n" +
			"holds (ClusterResourcePlacements and, across namespaces, ResourcePlacements).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, p, err := cfg.readSetup()
			if err != nil {
				return err
			}
			sel, err := labels.Parse(selector)
			if err != nil {
				return fmt.Errorf("invalid --selector %q: %w", selector, err)
			}
			return printClusters(cmd.Context(), c, sel, cfg.Out, p, cfg.now())
		},
	}
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "Only the member clusters with these labels (a label selector, e.g. env=prod).")
	return cmd
}

// printClusters writes the fleet's table.
func printClusters(ctx context.Context, c client.Client, sel labels.Selector, out io.Writer, p painter, now time.Time) error {
	list := &clusterv1beta1.MemberClusterList{}
	if err := c.List(ctx, list, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return fmt.Errorf("failed to list member clusters: %w", err)
	}
	if len(list.Items) == 0 {
		if sel.Empty() {
			fmt.Fprintln(out, "No member clusters: join one with `hub token create` and `agent join`.")
		} else {
			fmt.Fprintf(out, "No member clusters with labels %s.\n", sel)
		}
		return nil
	}
	bindings, err := listBindings(ctx, c, "*")
	if err != nil {
		return err
	}
	held := map[string]map[string]bool{}
	for _, b := range bindings {
		if !b.Active {
			continue
		}
		if held[b.Cluster] == nil {
			held[b.Cluster] = map[string]bool{}
		}
		held[b.Cluster][b.Placement] = true
	}
	leases := replicaLeases(ctx, c)
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	// The tabwriter counts colour codes as text: every STATE cell, the header's
	// too, carries codes of the same length (default colour for the header).
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "NAME\t%s\tTAINTS\tAGENT\tLAST-SEEN\tPLACEMENTS\n", p.paint(ansiDefault, "STATE"))
	for i := range list.Items {
		mc := &list.Items[i]
		state, good := clusterState(mc)
		taints := "<none>"
		if len(mc.Spec.Taints) > 0 {
			var ts []string
			for _, t := range mc.Spec.Taints {
				ts = append(ts, taintString(t))
			}
			taints = strings.Join(ts, ",")
		}
		agent := orNone(mc.Status.AgentVersion)
		seen := lastSeen(mc, leases, now)
		cell := pad(state, len("DISCONNECTED"))
		if good {
			cell = p.good(cell)
		} else {
			cell = p.bad(cell)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", mc.Name, cell, taints, agent, seen, len(held[mc.Name]))
	}
	return tw.Flush()
}

// replicaLeases returns the hub replicas' Leases by replica. A user who may not
// read Leases gets none: LAST-SEEN then shows the recorded heartbeat's age.
func replicaLeases(ctx context.Context, c client.Client) map[string]*coordinationv1.Lease {
	list := &coordinationv1.LeaseList{}
	if err := c.List(ctx, list, client.MatchingLabels{replica.LabelHubReplica: "true"}); err != nil {
		return nil
	}
	out := make(map[string]*coordinationv1.Lease, len(list.Items))
	for i := range list.Items {
		if h := list.Items[i].Spec.HolderIdentity; h != nil {
			out[*h] = &list.Items[i]
		}
	}
	return out
}

// lastSeen says when the hub last heard from a member. The hub keeps
// heartbeats in memory and records one in status only on a transition or a
// change, so a connected member whose session a replica with a live Lease
// holds is "live" (that replica ends sessions after missed heartbeats);
// otherwise it is the age of the heartbeat recorded last.
func lastSeen(mc *clusterv1beta1.MemberCluster, leases map[string]*coordinationv1.Lease, now time.Time) string {
	if as := mc.Status.AgentSession; as != nil && conditions.IsTrue(mc.Status.Conditions, clusterv1beta1.ConditionAgentConnected) {
		if l := leases[as.HubReplica]; l != nil && !replica.Expired(l, now) {
			return "live"
		}
	}
	if mc.Status.LastHeartbeatTime == nil {
		return "<never>"
	}
	return age(now, *mc.Status.LastHeartbeatTime)
}

// clusterState sums a member's conditions up in one word, and whether it is good.
func clusterState(mc *clusterv1beta1.MemberCluster) (string, bool) {
	conds := mc.Status.Conditions
	switch {
	case !mc.DeletionTimestamp.IsZero() || conditions.IsFalse(conds, clusterv1beta1.ConditionJoined):
		return "Leaving", false
	case !conditions.IsTrue(conds, clusterv1beta1.ConditionJoined):
		return "Joining", false
	case conditions.IsFalse(conds, clusterv1beta1.ConditionAgentConnected):
		return "Disconnected", false
	case conditions.IsFalse(conds, clusterv1beta1.ConditionHealthy):
		return "Unhealthy", false
	case conditions.IsTrue(conds, clusterv1beta1.ConditionHealthy):
		return "Healthy", true
	}
	c := conditions.Get(conds, clusterv1beta1.ConditionHealthy)
	if c != nil && c.Status == metav1.ConditionUnknown && conditions.IsTrue(conds, clusterv1beta1.ConditionAgentConnected) {
		return "Connected", true // health not reported yet
	}
	return "Unknown", false
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
