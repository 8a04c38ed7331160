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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// DefaultDrainTimeout is how long drain waits for its evictions.
const DefaultDrainTimeout = 5 * time.Minute

// NewCordonCommand is `cordon <cluster>`: no new placements go to the cluster.
func NewCordonCommand(cfg *Config) *cobra.Command {
	return &cobra.Command{
		Use:   "cordon <cluster>",
		Short: "Keep new placements off a member cluster (taint " + clusterv1beta1.TaintCordoned + ":NoSchedule)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := newDrainer(cfg)
			if err != nil {
				return err
			}
			return d.cordon(cmd.Context(), args[0])
		},
	}
}

// NewUncordonCommand is `uncordon <cluster>`: the cluster takes placements
// again, and the placements drain evicted may come back.
func NewUncordonCommand(cfg *Config) *cobra.Command {
	return &cobra.Command{
		Use:   "uncordon <cluster>",
		Short: "Let placements onto a member cluster again, including those a drain evicted",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := newDrainer(cfg)
			if err != nil {
				return err
			}
			return d.uncordon(cmd.Context(), args[0])
		},
	}
}

// NewDrainCommand is `drain <cluster>`: cordon, then evict every placement from
// the cluster, within their disruption budgets.
func NewDrainCommand(cfg *Config) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "drain <cluster>",
		Short: "Cordon a member cluster and evict its placements, within their disruption budgets",
		Long: "Cordon a member cluster and create a ClusterResourcePlacementEviction for every placement on it\n" +
			"(PickFixed placements are never moved and are skipped), then wait until each is executed.\n" +
			"Fails if some are still blocked by a disruption budget at --timeout. uncordon undoes it.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := newDrainer(cfg)
			if err != nil {
				return err
			}
			return d.drain(cmd.Context(), args[0], timeout)
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", DefaultDrainTimeout, "How long to wait for the evictions to execute.")
	return cmd
}

// drainer cordons, drains and uncordons member clusters.
type drainer struct {
	c   client.Client
	out io.Writer
	// interval is how often drain looks at its evictions. Default: 2s.
	interval time.Duration
}

func newDrainer(cfg *Config) (*drainer, error) {
	c, err := cfg.Client()
	if err != nil {
		return nil, err
	}
	return &drainer{c: c, out: cfg.Out}, nil
}

// cordon adds the cordoned taint to the cluster, unless it has it.
func (d *drainer) cordon(ctx context.Context, cluster string) error {
	changed, err := d.setCordoned(ctx, cluster, true)
	if err != nil {
		return err
	}
	if changed {
		fmt.Fprintf(d.out, "member cluster %s cordoned: no new placements go there\n", cluster)
	} else {
		fmt.Fprintf(d.out, "member cluster %s is already cordoned\n", cluster)
	}
	return nil
}

// uncordon removes the cordoned taint and deletes the cluster's drain evictions.
func (d *drainer) uncordon(ctx context.Context, cluster string) error {
	changed, err := d.setCordoned(ctx, cluster, false)
	if err != nil {
		return err
	}
	list := &placementv1beta1.ClusterResourcePlacementEvictionList{}
	if err := d.c.List(ctx, list, client.MatchingLabels{clusterv1beta1.LabelDrained: cluster}); err != nil {
		return fmt.Errorf("failed to list the drain evictions of member cluster %s: %w", cluster, err)
	}
	for i := range list.Items {
		if err := client.IgnoreNotFound(d.c.Delete(ctx, &list.Items[i])); err != nil {
			return fmt.Errorf("failed to delete eviction %s: %w", list.Items[i].Name, err)
		}
	}
	switch {
	case changed || len(list.Items) > 0:
		fmt.Fprintf(d.out, "member cluster %s uncordoned; deleted %d drain %s: placements may come back\n",
			cluster, len(list.Items), plural(len(list.Items), "eviction", "evictions"))
	default:
		fmt.Fprintf(d.out, "member cluster %s is not cordoned\n", cluster)
	}
	return nil
}

// setCordoned adds or removes the cordoned taint; it reports whether it changed
// anything. The patch carries the resourceVersion, so that it never drops a taint
// another writer (the hub's automatic taints) added meanwhile; a conflict is retried.
func (d *drainer) setCordoned(ctx context.Context, cluster string, cordoned bool) (bool, error) {
	changed := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := &clusterv1beta1.MemberCluster{}
		if err := d.c.Get(ctx, types.NamespacedName{Name: cluster}, mc); err != nil {
			return err
		}
		i := slices.IndexFunc(mc.Spec.Taints, isCordonTaint)
		if (i >= 0) == cordoned {
			changed = false
			return nil
		}
		patch := client.MergeFromWithOptions(mc.DeepCopy(), client.MergeFromWithOptimisticLock{})
		if cordoned {
			now := metav1.Now()
			mc.Spec.Taints = append(mc.Spec.Taints, clusterv1beta1.Taint{
				Key: clusterv1beta1.TaintCordoned, Effect: clusterv1beta1.TaintEffectNoSchedule, TimeAdded: &now,
			})
		} else {
			mc.Spec.Taints = slices.DeleteFunc(mc.Spec.Taints, isCordonTaint)
		}
		if err := d.c.Patch(ctx, mc, patch); err != nil {
			return err
		}
		changed = true
		return nil
	})
	switch {
	case apierrors.IsNotFound(err):
		return false, fmt.Errorf("member cluster %s not found", cluster)
	case err != nil:
		return false, fmt.Errorf("failed to update the taints of member cluster %s: %w", cluster, err)
	}
	return changed, nil
}

func isCordonTaint(t clusterv1beta1.Taint) bool {
	return t.Key == clusterv1beta1.TaintCordoned && t.Effect == clusterv1beta1.TaintEffectNoSchedule
}

// drain cordons the cluster, evicts its placements and waits for the evictions.
func (d *drainer) drain(ctx context.Context, cluster string, timeout time.Duration) error {
	if err := d.cordon(ctx, cluster); err != nil {
		return err
	}
	evictions, err := d.evictAll(ctx, cluster)
	if err != nil {
		return err
	}
	if len(evictions) == 0 {
		fmt.Fprintf(d.out, "member cluster %s drained: no placement to evict\n", cluster)
		return nil
	}
	return d.wait(ctx, cluster, evictions, timeout)
}

// drainEviction is an eviction drain created, and what it last printed about it.
type drainEviction struct {
	name, placement string
	// state is the eviction's last state: "", evicted, invalid, blocked or gone.
	state string
	// lastLine is the last line printed about it.
	lastLine string
}

// evictAll creates an eviction for every placement on the cluster, except
// PickFixed ones and those being deleted.
func (d *drainer) evictAll(ctx context.Context, cluster string) ([]*drainEviction, error) {
	bindings := &placementv1beta1.ClusterResourceBindingList{}
	if err := d.c.List(ctx, bindings); err != nil {
		return nil, fmt.Errorf("failed to list bindings: %w", err)
	}
	var placements []string
	for i := range bindings.Items {
		b := &bindings.Items[i]
		name := b.Labels[placementv1beta1.LabelPlacementName]
		if pipeline.IsActive(b) && name != "" && b.Spec.TargetCluster == cluster && !slices.Contains(placements, name) {
			placements = append(placements, name)
		}
	}
	slices.Sort(placements)
	var out []*drainEviction
	for _, p := range placements {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := d.c.Get(ctx, types.NamespacedName{Name: p}, crp); err != nil {
			if apierrors.IsNotFound(err) {
				continue // gone; its bindings go with it
			}
			return nil, fmt.Errorf("failed to get placement %s: %w", p, err)
		}
		switch {
		case !crp.DeletionTimestamp.IsZero():
			fmt.Fprintf(d.out, "skipping placement %s: it is being deleted\n", p)
			continue
		case crp.Spec.Policy != nil && crp.Spec.Policy.PlacementType == placementv1beta1.PickFixed:
			fmt.Fprintf(d.out, "skipping placement %s: PickFixed placements are never moved; change its clusterNames instead\n", p)
			continue
		}
		name, err := d.ensureEviction(ctx, cluster, p)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(d.out, "evicting placement %s from %s (ClusterResourcePlacementEviction %s)\n", p, cluster, name)
		out = append(out, &drainEviction{name: name, placement: p})
	}
	return out, nil
}

// ensureEviction creates the drain eviction of placement from cluster. One left
// from an earlier drain is kept, unless it was found invalid then (the world has
// changed since): it is replaced.
func (d *drainer) ensureEviction(ctx context.Context, cluster, placement string) (string, error) {
	name := DrainEvictionName(cluster, placement)
	ev := &placementv1beta1.ClusterResourcePlacementEviction{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{clusterv1beta1.LabelDrained: cluster}},
		Spec:       placementv1beta1.PlacementEvictionSpec{PlacementName: placement, ClusterName: cluster},
	}
	err := d.c.Create(ctx, ev.DeepCopy())
	if err == nil {
		return name, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("failed to create eviction %s: %w", name, err)
	}
	old := &placementv1beta1.ClusterResourcePlacementEviction{}
	if err := d.c.Get(ctx, types.NamespacedName{Name: name}, old); err != nil {
		return "", fmt.Errorf("failed to get eviction %s: %w", name, err)
	}
	if old.Spec != ev.Spec {
		return "", fmt.Errorf("eviction %s already exists for placement %s on %s", name, old.Spec.PlacementName, old.Spec.ClusterName)
	}
	if !conditions.IsFalse(old.Status.Conditions, placementv1beta1.ConditionEvictionValid) {
		return name, nil
	}
	if err := client.IgnoreNotFound(d.c.Delete(ctx, old, client.Preconditions{UID: &old.UID})); err != nil {
		return "", fmt.Errorf("failed to replace eviction %s: %w", name, err)
	}
	if err := d.c.Create(ctx, ev); err != nil {
		return "", fmt.Errorf("failed to replace eviction %s: %w", name, err)
	}
	return name, nil
}

// DrainEvictionName returns the name of the eviction drain creates for a
// placement on a cluster: drain-<cluster>-<placement>, shortened with a hash when
// longer than an object name may be.
func DrainEvictionName(cluster, placement string) string {
	const maxLen = 253
	name := "drain-" + cluster + "-" + placement
	if len(name) <= maxLen {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	suffix := "-" + hex.EncodeToString(sum[:])[:10]
	return strings.TrimRight(name[:maxLen-len(suffix)], "-.") + suffix
}

// wait prints each eviction's progress until all are executed or invalid, and
// fails when some are not by the timeout.
func (d *drainer) wait(ctx context.Context, cluster string, evictions []*drainEviction, timeout time.Duration) error {
	interval := d.interval
	if interval <= 0 {
		interval = 2 * time.Second
	}
	deadline := time.Now().Add(timeout)
	for {
		var blocked, pending []string
		for _, e := range evictions {
			state, msg, err := d.evictionState(ctx, e.name)
			if err != nil {
				return err
			}
			d.report(e, cluster, state, msg)
			switch state {
			case "blocked":
				blocked = append(blocked, e.placement)
			case "":
				pending = append(pending, e.placement)
			}
		}
		if len(blocked) == 0 && len(pending) == 0 {
			evicted := 0
			for _, e := range evictions {
				if e.state == "evicted" {
					evicted++
				}
			}
			fmt.Fprintf(d.out, "member cluster %s drained: %d %s evicted", cluster, evicted, plural(evicted, "placement", "placements"))
			if n := len(evictions) - evicted; n > 0 {
				fmt.Fprintf(d.out, ", %d not (see above)", n)
			}
			fmt.Fprintln(d.out)
			return nil
		}
		if time.Now().After(deadline) {
			if len(blocked) > 0 {
				return fmt.Errorf("drain of member cluster %s timed out after %s: %d %s still blocked by a disruption budget: %s",
					cluster, timeout, len(blocked), plural(len(blocked), "placement", "placements"), strings.Join(blocked, ", "))
			}
			return fmt.Errorf("drain of member cluster %s timed out after %s: the hub has not handled the evictions of %s (is the hub running?)",
				cluster, timeout, strings.Join(pending, ", "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// evictionState returns where an eviction stands: "" (not decided yet), evicted,
// invalid, blocked, or gone (deleted), with its message.
func (d *drainer) evictionState(ctx context.Context, name string) (string, string, error) {
	ev := &placementv1beta1.ClusterResourcePlacementEviction{}
	if err := d.c.Get(ctx, types.NamespacedName{Name: name}, ev); err != nil {
		if apierrors.IsNotFound(err) {
			return "gone", "", nil
		}
		return "", "", fmt.Errorf("failed to get eviction %s: %w", name, err)
	}
	if c := conditions.Get(ev.Status.Conditions, placementv1beta1.ConditionEvictionValid); c != nil && c.Status == metav1.ConditionFalse {
		return "invalid", c.Message, nil
	}
	if c := conditions.Get(ev.Status.Conditions, placementv1beta1.ConditionEvictionExecuted); c != nil {
		if c.Status == metav1.ConditionTrue {
			return "evicted", c.Message, nil
		}
		return "blocked", c.Message, nil
	}
	return "", "", nil
}

// report prints a change of an eviction's state (and of a blocked one's message).
func (d *drainer) report(e *drainEviction, cluster, state, msg string) {
	line := ""
	switch state {
	case "evicted":
		line = fmt.Sprintf("placement %s evicted from %s", e.placement, cluster)
	case "invalid":
		line = fmt.Sprintf("placement %s not evicted: %s", e.placement, msg)
	case "blocked":
		line = fmt.Sprintf("placement %s blocked by its disruption budget: %s", e.placement, msg)
	case "gone":
		line = fmt.Sprintf("placement %s not evicted: eviction %s was deleted", e.placement, e.name)
	}
	if line != "" && line != e.lastLine {
		fmt.Fprintln(d.out, line)
	}
	e.state, e.lastLine = state, line
}
