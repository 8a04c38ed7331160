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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func newWhoPlacedCommand(cfg *Config) *cobra.Command {
	var cluster string
	cmd := &cobra.Command{
		Use:   "who-placed KIND/NAME --cluster MEMBER",
		Short: "Show which placement put an object on a member cluster",
		Long: "Show, from the hub, which placements put an object on a member cluster: the Works in the\n" +
			"member's namespace on the hub that list it, each with its placement, the resource snapshot\n" +
			"index, and the agent's Applied and Available conditions for the object. KIND is a kind or a\n" +
			"resource (Deployment, deployment, deployments), optionally with its group\n" +
			"(deployments.apps). -n <namespace> is the object's namespace; without it, objects of that\n" +
			"kind and name in any namespace (and cluster-scoped ones) are shown.",
		Example: "  kubectl flotilla who-placed deployment/web -n web --cluster member-1",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			target, err := parseObjectArg(args[0])
			if err != nil {
				return err
			}
			if cluster == "" {
				return errors.New("--cluster is required: the member cluster the object is on")
			}
			target.namespace, target.namespaced = cfg.Namespace()
			c, p, err := cfg.readSetup()
			if err != nil {
				return err
			}
			return printWhoPlaced(cmd.Context(), c, target, cluster, cfg.Out, p, cfg.now())
		},
	}
	cmd.Flags().StringVar(&cluster, "cluster", "", "The member cluster the object is on (required).")
	return cmd
}

// objectArg is the object who-placed looks for.
type objectArg struct {
	// kind is a kind or a resource, lower case; group is "" for any group.
	kind, group, name string
	// namespace is the object's; namespaced is false when -n was not given
	// (any namespace matches).
	namespace  string
	namespaced bool
}

// parseObjectArg reads KIND[.GROUP]/NAME.
func parseObjectArg(s string) (objectArg, error) {
	kind, name, ok := strings.Cut(s, "/")
	if !ok || kind == "" || name == "" || strings.Contains(name, "/") {
		return objectArg{}, fmt.Errorf("%q is not KIND/NAME (for example deployment/web or deployments.apps/web)", s)
	}
	kind, group, _ := strings.Cut(strings.ToLower(kind), ".")
	return objectArg{kind: kind, group: group, name: name}, nil
}

func (o objectArg) String() string {
	kind := o.kind
	if o.group != "" {
		kind += "." + o.group
	}
	if o.namespaced {
		return fmt.Sprintf("%s %s/%s", kind, o.namespace, o.name)
	}
	return kind + " " + o.name
}

// manifestHead is what who-placed reads of a manifest.
type manifestHead struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
}

// placedBy is one manifest of a Work that places the object.
type placedBy struct {
	work     *placementv1beta1.Work
	ordinal  int
	head     manifestHead
	group    string
	resource string // from the agent's report; "" if none
	// status is the agent's report of the manifest; nil if none.
	status *placementv1beta1.ManifestCondition
}

// matches reports whether a manifest (its head, group and resource) is the object.
func (o objectArg) matches(h manifestHead, group, resource string) bool {
	if h.Metadata.Name != o.name || (o.namespaced && h.Metadata.Namespace != o.namespace) {
		return false
	}
	if o.group != "" && o.group != group {
		return false
	}
	k := strings.ToLower(h.Kind)
	return o.kind == k || o.kind == k+"s" || o.kind == k+"es" || (resource != "" && o.kind == resource)
}

// findPlacedBy returns the manifests of the Works in the member's namespace that
// are the object, by Work name and ordinal.
func findPlacedBy(works []placementv1beta1.Work, o objectArg) []placedBy {
	var out []placedBy
	for i := range works {
		w := &works[i]
		for ord, m := range w.Spec.Workload.Manifests {
			var h manifestHead
			if err := json.Unmarshal(m.Raw, &h); err != nil {
				continue // the agent reports it
			}
			gv, _ := schema.ParseGroupVersion(h.APIVersion)
			var status *placementv1beta1.ManifestCondition
			for j := range w.Status.ManifestConditions {
				if w.Status.ManifestConditions[j].Identifier.Ordinal == ord {
					status = &w.Status.ManifestConditions[j]
				}
			}
			resource := ""
			if status != nil && status.Identifier.Name == h.Metadata.Name && status.Identifier.Kind == h.Kind {
				resource = status.Identifier.Resource
			} else {
				status = nil // a report of another spec
			}
			if o.matches(h, gv.Group, resource) {
				out = append(out, placedBy{work: w, ordinal: ord, head: h, group: gv.Group, resource: resource, status: status})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b placedBy) int { return strings.Compare(a.work.Name, b.work.Name) })
	return out
}

// printWhoPlaced answers who-placed from the Works in the member's namespace.
func printWhoPlaced(ctx context.Context, c client.Client, o objectArg, cluster string, out io.Writer, p painter, now time.Time) error {
	mc := &clusterv1beta1.MemberCluster{}
	if err := c.Get(ctx, types.NamespacedName{Name: cluster}, mc); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("there is no member cluster %s", cluster)
		}
		return fmt.Errorf("failed to get member cluster %s: %w", cluster, err)
	}
	ns := clusterv1beta1.MemberNamespace(cluster)
	works := &placementv1beta1.WorkList{}
	if err := c.List(ctx, works, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("failed to list the Works of member cluster %s: %w", cluster, err)
	}
	found := findPlacedBy(works.Items, o)
	if len(found) == 0 {
		return fmt.Errorf("no placement puts %s on member cluster %s: no Work in %s lists it", o, cluster, ns)
	}
	root := &node{text: p.bold(fmt.Sprintf("%s on %s is placed by %s", o, cluster, plural(len(found), "1 Work", fmt.Sprintf("%d Works", len(found)))))}
	for _, f := range found {
		f.addTo(root, p, now)
	}
	root.print(out)
	if len(found) > 1 {
		fmt.Fprintf(out, "\nSeveral Works list the object: on %s it carries the annotation %s of the one that applied it last (applyStrategy.whenToTakeOver decides who may).\n",
			cluster, placementv1beta1.AnnotationWork)
	}
	return nil
}

// addTo adds the lines of one Work's manifest under root.
func (f placedBy) addTo(root *node, p painter, now time.Time) {
	w := f.work
	name := f.head.Metadata.Name
	if f.head.Metadata.Namespace != "" {
		name = f.head.Metadata.Namespace + "/" + name
	}
	n := root.add("%s", p.bold(placementOf(w, f.head)))
	n.add("object: %s %s", strings.TrimSpace(f.head.APIVersion+" "+f.head.Kind), name)
	n.add("Work: %s/%s, manifest %d (generation %d)", w.Namespace, w.Name, f.ordinal, w.Generation)
	ann := f.head.Metadata.Annotations
	if idx := ann[placementv1beta1.AnnotationResourceIndex]; idx != "" {
		line := "resource index: " + idx
		if hub := ann[placementv1beta1.AnnotationHub]; hub != "" {
			line += " (hub " + hub + ")"
		}
		n.add("%s", line)
	} else {
		n.add("resource index: unknown (the Work carries no provenance annotations: a hub older than them wrote it)")
	}
	if f.status == nil || len(f.status.Conditions) == 0 {
		n.add("%s", p.warn("no report from the agent about this manifest yet"))
		return
	}
	addConditions(n, f.status.Conditions, []string{placementv1beta1.ConditionApplied, placementv1beta1.ConditionAvailable, placementv1beta1.ConditionDiffReported},
		"", w.Generation, p, now)
}

// placementOf names the placement of a Work: its labels, or else the
// manifest's provenance annotation.
func placementOf(w *placementv1beta1.Work, h manifestHead) string {
	if name := w.Labels[placementv1beta1.LabelPlacementName]; name != "" {
		if pns := w.Labels[placementv1beta1.LabelPlacementNamespace]; pns != "" {
			return "ResourcePlacement " + pns + "/" + name
		}
		return "ClusterResourcePlacement " + name
	}
	if ref := h.Metadata.Annotations[placementv1beta1.AnnotationPlacement]; ref != "" {
		kind, rest, _ := strings.Cut(ref, "/")
		return kind + " " + rest
	}
	return "no placement (the Work has no placement labels: made by hand?)"
}
