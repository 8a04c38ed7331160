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
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// conditionDiffReported is the per-cluster condition of ReportDiff placements.
const conditionDiffReported = "DiffReported"

func newStatusCommand(cfg *Config) *cobra.Command {
	return &cobra.Command{
		Use:   "status <placement>",
		Short: "Show a placement as a tree: clusters, conditions, failed, drifted and diffed manifests",
		Long: "Show a placement as a tree: its conditions, then each cluster with its conditions and, under\n" +
			"them, the manifests that failed, drifted or differ. Conditions older than the placement's\n" +
			"generation are marked stale. -n <namespace> shows a ResourcePlacement.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, p, err := cfg.readSetup()
			if err != nil {
				return err
			}
			return printStatus(cmd.Context(), c, cfg.placementRef(args[0]), cfg.Out, p, cfg.now())
		},
	}
}

// printStatus writes the placement's status tree.
func printStatus(ctx context.Context, c client.Client, ref placementRef, out io.Writer, p painter, now time.Time) error {
	pl, err := getPlacement(ctx, c, ref)
	if err != nil {
		return err
	}
	statusTree(pl, p, now).print(out)
	return nil
}

// statusTree builds the placement's status tree.
func statusTree(pl *loadedPlacement, p painter, now time.Time) *node {
	ref := pl.ref
	gen := pl.obj.GetGeneration()
	root := &node{text: p.bold(ref.String()) + " " + p.faint(placementSummary(pl))}
	if !pl.obj.GetDeletionTimestamp().IsZero() {
		root.add("%s", p.warn("being deleted"))
	}
	var types []string
	for _, t := range placementv1beta1.PerClusterConditionTypes() {
		types = append(types, ref.conditionType(t))
	}
	if len(pl.stat.Conditions) == 0 {
		root.add("%s", p.warn("no conditions yet: the hub has not handled the placement (is the hub running?)"))
	}
	addConditions(root, pl.stat.Conditions, types, ref.conditionType(""), gen, p, now)

	drifted := driftedPlacements(pl.raw)
	for i := range pl.stat.PlacementStatuses {
		ps := &pl.stat.PlacementStatuses[i]
		var cn *node
		if ps.ClusterName == "" {
			// The hub sums up the PickN clusters it could not select in
			// one entry; its Scheduled message says how many.
			cn = root.add("%s", p.warn("(clusters not selected)"))
		} else {
			cn = root.add("%s", p.bold(ps.ClusterName))
		}
		conds := addConditions(cn, ps.Conditions, placementv1beta1.PerClusterConditionTypes(), "", gen, p, now)
		under := func(types ...string) *node {
			for _, t := range types {
				if n, ok := conds[t]; ok {
					return n
				}
			}
			return cn
		}
		for _, f := range ps.FailedPlacements {
			under(f.Condition.Type, placementv1beta1.ConditionApplied).add("%s %s: %s: %s",
				p.bad("failed"), resourceString(f.ResourceIdentifier), f.Condition.Reason, f.Condition.Message)
		}
		for _, d := range drifted[ps.ClusterName] {
			n := under(placementv1beta1.ConditionApplied).add("%s %s%s", p.warn("drifted"), resourceString(d.id), since(now, d.since, "first seen "))
			addPatchDetails(n, d.details)
		}
		for _, d := range ps.DiffedPlacements {
			at := metav1.Time{}
			if d.ObservationTime != nil {
				at = *d.ObservationTime
			}
			n := under(conditionDiffReported, placementv1beta1.ConditionApplied).add("%s %s%s", p.warn("differs"), resourceString(d.ResourceIdentifier), since(now, at, "observed "))
			addPatchDetails(n, d.ObservedDiffs)
		}
	}
	return root
}

// placementSummary is the header's detail: generation, policy and resources.
func placementSummary(pl *loadedPlacement) string {
	parts := []string{fmt.Sprintf("generation %d", pl.obj.GetGeneration())}
	kind := placementv1beta1.PickAll
	if pol := pl.spec.Policy; pol != nil && pol.PlacementType != "" {
		kind = pol.PlacementType
	}
	switch pol := pl.spec.Policy; {
	case kind == placementv1beta1.PickN && pol.NumberOfClusters != nil:
		parts = append(parts, fmt.Sprintf("PickN %d", *pol.NumberOfClusters))
	case kind == placementv1beta1.PickFixed:
		parts = append(parts, "PickFixed "+strings.Join(pol.ClusterNames, ","))
	default:
		parts = append(parts, string(kind))
	}
	if n := len(pl.stat.SelectedResources); n > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", n, plural(n, "resource", "resources")))
	}
	if pl.stat.ObservedResourceIndex != "" {
		parts = append(parts, "resource index "+pl.stat.ObservedResourceIndex)
	}
	if s := pl.spec.SchedulerName; s != "" {
		parts = append(parts, "scheduler "+s)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// addConditions adds a line per condition under n: the known types in order,
// then the others; prefix is cut from the types shown. It returns the lines by
// condition type (without prefix).
func addConditions(n *node, conds []metav1.Condition, order []string, prefix string, gen int64, p painter, now time.Time) map[string]*node {
	sorted := slices.Clone(conds)
	rank := func(t string) int {
		if i := slices.Index(order, t); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(sorted, func(a, b metav1.Condition) int { return rank(a.Type) - rank(b.Type) })
	width := 0
	for _, c := range sorted {
		width = max(width, len(strings.TrimPrefix(c.Type, prefix)))
	}
	out := map[string]*node{}
	for _, c := range sorted {
		t := strings.TrimPrefix(c.Type, prefix)
		line := pad(t, width) + " " + p.status(c.Status) + " " + c.Reason
		var detail []string
		if a := age(now, c.LastTransitionTime); a != "" {
			detail = append(detail, a)
		}
		if c.ObservedGeneration != 0 && c.ObservedGeneration < gen {
			detail = append(detail, p.warn(fmt.Sprintf("stale: generation %d", c.ObservedGeneration)))
		}
		if len(detail) > 0 {
			line += " (" + strings.Join(detail, ", ") + ")"
		}
		if c.Message != "" {
			line += ": " + c.Message
		}
		out[t] = n.add("%s", line)
	}
	return out
}

func addPatchDetails(n *node, details []placementv1beta1.PatchDetail) {
	for _, d := range details {
		n.add("%s: member %s, hub %s", d.Path, quoteOrAbsent(d.ValueInMember), quoteOrAbsent(d.ValueInHub))
	}
}

func quoteOrAbsent(v string) string {
	if v == "" {
		return "(absent)"
	}
	return v
}

func since(now time.Time, t metav1.Time, what string) string {
	if a := age(now, t); a != "" {
		return " (" + what + a + ")"
	}
	return ""
}

// resourceString writes a manifest as "group/version Kind namespace/name".
func resourceString(id placementv1beta1.ResourceIdentifier) string {
	gv := id.Version
	if id.Group != "" {
		gv = id.Group + "/" + id.Version
	}
	name := id.Name
	if id.Namespace != "" {
		name = id.Namespace + "/" + id.Name
	}
	return strings.TrimSpace(gv + " " + id.Kind + " " + name)
}

// drift is a drifted manifest: status.placementStatuses[].driftedPlacements[],
// read from the raw object so that the command shows it whichever API version
// of the hub added it.
type drift struct {
	id      placementv1beta1.ResourceIdentifier
	since   metav1.Time
	details []placementv1beta1.PatchDetail
}

func driftedPlacements(raw map[string]any) map[string][]drift {
	statuses, _, _ := unstructured.NestedSlice(raw, "status", "placementStatuses")
	out := map[string][]drift{}
	for _, s := range statuses {
		ps, ok := s.(map[string]any)
		if !ok {
			continue
		}
		cluster, _, _ := unstructured.NestedString(ps, "clusterName")
		items, _, _ := unstructured.NestedSlice(ps, "driftedPlacements")
		for _, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				continue
			}
			str := func(k string) string { v, _, _ := unstructured.NestedString(m, k); return v }
			d := drift{id: placementv1beta1.ResourceIdentifier{Group: str("group"), Version: str("version"), Kind: str("kind"), Name: str("name"), Namespace: str("namespace")}}
			if t, err := time.Parse(time.RFC3339, str("firstDriftedObservedTime")); err == nil {
				d.since = metav1.NewTime(t)
			}
			drifts, _, _ := unstructured.NestedSlice(m, "observedDrifts")
			for _, od := range drifts {
				if odm, ok := od.(map[string]any); ok {
					v := func(k string) string { x, _, _ := unstructured.NestedString(odm, k); return x }
					d.details = append(d.details, placementv1beta1.PatchDetail{Path: v("path"), ValueInMember: v("valueInMember"), ValueInHub: v("valueInHub")})
				}
			}
			out[cluster] = append(out[cluster], d)
		}
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
