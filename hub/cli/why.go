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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/taints"
)

func newWhyCommand(cfg *Config) *cobra.Command {
	return &cobra.Command{
		Use:   "why <placement> <cluster>",
		Short: "Explain why a placement is, or is not, on a member cluster",
		Long: "Explain the scheduler's decision about one member cluster for a placement, as recorded on the\n" +
			"placement's latest scheduling policy snapshot: each filter's verdict, the scores, the\n" +
			"Location, the cluster's taints and the placement's tolerations. -n <namespace> explains a\n" +
			"ResourcePlacement.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, p, err := cfg.readSetup()
			if err != nil {
				return err
			}
			return printWhy(cmd.Context(), c, cfg.placementRef(args[0]), args[1], cfg.Out, p, cfg.now())
		},
	}
}

// why is what printWhy reads.
type why struct {
	pl       *loadedPlacement
	cluster  string
	mc       *clusterv1beta1.MemberCluster // nil if there is no such cluster
	snap     placementv1beta1.PolicySnapshotObj
	decision *placementv1beta1.ClusterDecision
	bindings []binding // the placement's bindings to the cluster
	policy   *placementv1beta1.PlacementPolicy
}

func loadWhy(ctx context.Context, c client.Client, ref placementRef, cluster string) (*why, error) {
	pl, err := getPlacement(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	w := &why{pl: pl, cluster: cluster, policy: pl.spec.Policy}
	mc := &clusterv1beta1.MemberCluster{}
	switch err := c.Get(ctx, types.NamespacedName{Name: cluster}, mc); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("failed to get member cluster %s: %w", cluster, err)
	default:
		w.mc = mc
	}
	if w.snap, err = latestPolicySnapshot(ctx, c, ref); err != nil {
		return nil, err
	}
	if w.snap != nil {
		// The snapshot's policy is the one the decision was made for.
		w.policy = w.snap.GetPolicySnapshotSpec().Policy
		for i, d := range w.snap.GetPolicySnapshotStatus().TargetClusters {
			if d.ClusterName == cluster {
				w.decision = &w.snap.GetPolicySnapshotStatus().TargetClusters[i]
			}
		}
	}
	ns := ref.Namespace
	all, err := listBindings(ctx, c, ns, client.MatchingLabels{placementv1beta1.LabelPlacementName: ref.Name})
	if err != nil {
		return nil, err
	}
	for _, b := range all {
		if b.Cluster == cluster {
			w.bindings = append(w.bindings, b)
		}
	}
	return w, nil
}

// printWhy explains the scheduler's decision about a cluster for a placement.
func printWhy(ctx context.Context, c client.Client, ref placementRef, cluster string, out io.Writer, p painter, now time.Time) error {
	w, err := loadWhy(ctx, c, ref, cluster)
	if err != nil {
		return err
	}
	var locations []clusterv1beta1.Location
	if w.policy != nil && len(w.policy.LocationSelectors) > 0 {
		list := &clusterv1beta1.LocationList{}
		if err := c.List(ctx, list); err != nil {
			return fmt.Errorf("failed to list Locations: %w", err)
		}
		locations = list.Items
	}
	fmt.Fprintf(out, "%s\n\n", p.bold(fmt.Sprintf("Why is %s (not) on %s?", ref, cluster)))
	w.writeNow(out, p)
	if !w.writeDecision(out, p, now) {
		return nil
	}
	w.writeFilters(out, p)
	w.writeScores(out)
	w.writeLocation(out, locations)
	w.writeTaints(out, p, now)
	return nil
}

// writeNow says where the placement is now.
func (w *why) writeNow(out io.Writer, p painter) {
	if w.mc == nil {
		fmt.Fprintf(out, "There is no member cluster %s.\n", w.cluster)
	}
	var active []string
	for _, b := range w.bindings {
		if b.Active {
			active = append(active, fmt.Sprintf("binding %s, %s", b.Name, b.State))
		}
	}
	if len(active) > 0 {
		fmt.Fprintf(out, "Now: the placement %s on %s (%s).\n", p.good("is"), w.cluster, strings.Join(active, "; "))
	} else {
		fmt.Fprintf(out, "Now: the placement %s on %s.\n", p.bad("is not"), w.cluster)
	}
}

// writeDecision states the recorded decision; false means there is none.
func (w *why) writeDecision(out io.Writer, p painter, now time.Time) bool {
	if s := w.pl.spec.SchedulerName; s != "" && s != "flotilla-scheduler" {
		fmt.Fprintf(out, "The placement's schedulerName is %q: that scheduler, not Flotilla's, decides where it goes.\n", s)
	}
	if w.snap == nil {
		fmt.Fprintln(out, "The placement has no scheduling policy snapshot yet: the hub has not handled it (is the hub running?).")
		return false
	}
	st := w.snap.GetPolicySnapshotStatus()
	if c := conditions.Get(st.Conditions, placementv1beta1.ConditionScheduled); c != nil {
		fmt.Fprintf(out, "The latest scheduling cycle (policy snapshot %s, %s): Scheduled=%s %s: %s.\n",
			w.snap.GetName(), age(now, c.LastTransitionTime), p.status(c.Status), c.Reason, strings.TrimSuffix(c.Message, "."))
	} else {
		fmt.Fprintf(out, "The scheduler has not handled policy snapshot %s yet.\n", w.snap.GetName())
		return false
	}
	d := w.decision
	if d == nil {
		fmt.Fprintf(out, "\nThe scheduler recorded no decision about %s: it was not a member cluster at the latest cycle"+
			" (or it was not selected and not among the 20 best ranked others the snapshot records).\n", w.cluster)
		return false
	}
	verdict := p.bad("not selected")
	if d.Selected {
		verdict = p.good("selected")
	}
	fmt.Fprintf(out, "\nDecision: %s was %s: %s.\n", w.cluster, verdict, strings.TrimSuffix(d.Reason, "."))
	return true
}

// writeFilters gives each filter's verdict.
func (w *why) writeFilters(out io.Writer, p painter) {
	d := w.decision
	fmt.Fprintln(out, "\nFilters, in the order they ran:")
	if len(d.PassedFilters) == 0 && d.FilteredBy == "" {
		fmt.Fprintln(out, "  none ran for this cluster.")
	}
	for _, f := range d.PassedFilters {
		fmt.Fprintf(out, "  - %s %s it.\n", f, p.good("passed"))
	}
	if d.FilteredBy != "" {
		fmt.Fprintf(out, "  - %s %s it: %s.\n", d.FilteredBy, p.bad("rejected"), strings.TrimSuffix(d.Reason, "."))
		if !d.Selected && !slices.Contains(w.boundClusters(), w.cluster) {
			fmt.Fprintf(out, "  Filters after %s did not run.\n", d.FilteredBy)
		}
	}
	fmt.Fprintln(out, "  A filter the policy gives nothing to check (no affinity, no tolerations needed, ...) does not run.")
}

func (w *why) boundClusters() []string {
	var out []string
	for _, b := range w.bindings {
		if b.Active {
			out = append(out, b.Cluster)
		}
	}
	return out
}

// writeScores gives the cluster's scores and rank among the scored clusters.
func (w *why) writeScores(out io.Writer) {
	d := w.decision
	fmt.Fprintln(out, "\nScores:")
	if d.ClusterScore == nil {
		fmt.Fprintln(out, "  not scored: only clusters that pass every filter are scored.")
		return
	}
	aff, top, pref := scoreValues(d.ClusterScore)
	if d.ClusterScore.PreferenceScore != nil {
		fmt.Fprintf(out, "  preference score %d: the rank of its group in clusterPreferences (the first of n groups scores n); it outweighs the others.\n", pref)
	}
	fmt.Fprintf(out, "  affinity score %d: the sum of the weights of the preferred affinity terms it meets.\n", aff)
	fmt.Fprintf(out, "  topology spread score %d: 0 is best; a crowded topology domain scores below 0.\n", top)
	scored := 0
	rank := 1
	for _, o := range w.snap.GetPolicySnapshotStatus().TargetClusters {
		if o.ClusterScore == nil {
			continue
		}
		scored++
		oa, ot, op := scoreValues(o.ClusterScore)
		if op > pref || (op == pref && (ot > top || (ot == top && oa > aff))) {
			rank++
		}
	}
	kind := placementv1beta1.PickAll
	if w.policy != nil && w.policy.PlacementType != "" {
		kind = w.policy.PlacementType
	}
	if kind == placementv1beta1.PickN && w.policy.NumberOfClusters != nil {
		order := "topology spread first, then affinity"
		if d.ClusterScore.PreferenceScore != nil {
			order = "preference first, then topology spread, then affinity"
		}
		fmt.Fprintf(out, "  It ranks %s of %d scored clusters (%s); the policy asks for %d.\n",
			ordinal(rank), scored, order, *w.policy.NumberOfClusters)
	} else {
		fmt.Fprintf(out, "  %s does not rank clusters: the scores only show how well the cluster fits.\n", kind)
	}
}

// scoreValues returns the affinity, topology spread and preference scores, 0
// for those absent.
func scoreValues(s *placementv1beta1.ClusterScore) (aff, top, pref int32) {
	if s.AffinityScore != nil {
		aff = *s.AffinityScore
	}
	if s.TopologySpreadScore != nil {
		top = *s.TopologySpreadScore
	}
	if s.PreferenceScore != nil {
		pref = *s.PreferenceScore
	}
	return aff, top, pref
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// writeLocation says which Location the placement is kept in.
func (w *why) writeLocation(out io.Writer, locations []clusterv1beta1.Location) {
	fmt.Fprintln(out, "\nLocation:")
	if w.policy == nil || len(w.policy.LocationSelectors) == 0 {
		fmt.Fprintln(out, "  the policy has no locationSelectors: every member cluster may be chosen.")
		return
	}
	var sels []string
	for i := range w.policy.LocationSelectors {
		sels = append(sels, metav1.FormatLabelSelector(&w.policy.LocationSelectors[i]))
	}
	fmt.Fprintf(out, "  the policy selects Locations by %s.\n", strings.Join(sels, " or "))
	chosen := w.decision.Location
	for _, d := range w.snap.GetPolicySnapshotStatus().TargetClusters {
		if chosen == "" {
			chosen = d.Location
		}
	}
	if chosen == "" {
		fmt.Fprintln(out, "  No Location was chosen (see the latest cycle above).")
	} else if w.decision.Location == chosen {
		fmt.Fprintf(out, "  The placement is kept in Location %s, and %s is one of its instances.\n", chosen, w.cluster)
	} else {
		fmt.Fprintf(out, "  The placement is kept in Location %s, and %s is not one of its instances.\n", chosen, w.cluster)
	}
	if w.mc == nil {
		return
	}
	var of []string
	for i := range locations {
		sel, err := metav1.LabelSelectorAsSelector(&locations[i].Spec.InstanceSelector)
		if err == nil && sel.Matches(labels.Set(w.mc.Labels)) {
			of = append(of, locations[i].Name)
		}
	}
	if len(of) == 0 {
		fmt.Fprintf(out, "  %s is an instance of no Location.\n", w.cluster)
	} else {
		fmt.Fprintf(out, "  %s is an instance of %s.\n", w.cluster, strings.Join(of, ", "))
	}
}

// writeTaints lists the cluster's taints, whether the placement tolerates each,
// and the placement's tolerations.
func (w *why) writeTaints(out io.Writer, p painter, now time.Time) {
	var tols []placementv1beta1.Toleration
	if w.policy != nil {
		tols = w.policy.Tolerations
	}
	fmt.Fprintln(out, "\nTaints and tolerations:")
	switch {
	case w.mc == nil:
	case len(w.mc.Spec.Taints) == 0:
		fmt.Fprintf(out, "  %s has no taints.\n", w.cluster)
	default:
		for i := range w.mc.Spec.Taints {
			t := &w.mc.Spec.Taints[i]
			effect := "keeps new placements off"
			if t.Effect == clusterv1beta1.TaintEffectNoExecute {
				effect = "keeps new placements off and moves placements that do not tolerate it away"
			}
			added := ""
			if t.TimeAdded != nil {
				added = "; added " + age(now, *t.TimeAdded)
			}
			verdict := p.bad("not tolerated")
			for j := range tols {
				if taints.Tolerates(&tols[j], t) {
					verdict = p.good("tolerated") + " by " + tolerationString(tols[j])
					break
				}
			}
			fmt.Fprintf(out, "  %s has taint %s (%s%s): %s.\n", w.cluster, taintString(*t), effect, added, verdict)
		}
	}
	if len(tols) == 0 {
		fmt.Fprintln(out, "  The placement has no tolerations.")
		return
	}
	for _, t := range tols {
		fmt.Fprintf(out, "  The placement tolerates %s.\n", tolerationString(t))
	}
}

// taintString writes a taint as kubectl does: key=value:Effect.
func taintString(t clusterv1beta1.Taint) string {
	s := t.Key
	if t.Value != "" {
		s += "=" + t.Value
	}
	return s + ":" + string(t.Effect)
}

// tolerationString writes a toleration in words.
func tolerationString(t placementv1beta1.Toleration) string {
	var s string
	switch {
	case t.Operator == placementv1beta1.TolerationOpExists && t.Key == "":
		s = "every taint"
	case t.Operator == placementv1beta1.TolerationOpExists:
		s = "taint " + t.Key + " with any value"
	default:
		s = "taint " + t.Key + "=" + t.Value
	}
	if t.Effect != "" {
		s += " (" + string(t.Effect) + ")"
	}
	if t.TolerationSeconds != nil {
		s += fmt.Sprintf(" for %ds", *t.TolerationSeconds)
	}
	return s
}
