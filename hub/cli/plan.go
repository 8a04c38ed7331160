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
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	planv1beta1 "github.com/flotilla-io/flotilla/apis/plan/v1beta1"
)

// planOptions are the flags of `kubectl flotilla plan`.
type planOptions struct {
	files         []string
	placement     string
	staged        string
	showManifests bool
	diff          bool
	output        string
}

func newPlanCommand(cfg *Config) *cobra.Command {
	o := &planOptions{}
	cmd := &cobra.Command{
		Use:   "plan -f FILE",
		Short: "Show what a placement or override would do, without doing it",
		Long: "Ask the hub what a new placement, or an edit of a placement or of overrides, would do: the\n" +
			"scheduler, the overrides and the envelopes run on the hub's current state and nothing is\n" +
			"written. FILE holds a ClusterResourcePlacement or ResourcePlacement and/or\n" +
			"ClusterResourceOverrides and ResourceOverrides (several YAML documents; - reads stdin). With\n" +
			"overrides only, --placement names the placement to plan (-n for a ResourcePlacement).\n" +
			"The report lists every cluster Selected, Kept, Dropped or NotSelected and why, the rollout's\n" +
			"waves (or a staged run's stages, with --staged-strategy), and per cluster what changes;\n" +
			"--show-manifests prints the rendered objects and --diff the changes. The hub serves it as the\n" +
			"PlacementPlan API (plan.flotilla.io/v1beta1); -o yaml|json prints the raw answer.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pp, err := o.request(cfg, cmd.InOrStdin())
			if err != nil {
				return err
			}
			c, p, err := cfg.readSetup()
			if err != nil {
				return err
			}
			if err := c.Create(cmd.Context(), pp); err != nil {
				return fmt.Errorf("failed to plan: %w", err)
			}
			switch o.output {
			case "yaml":
				out, err := yaml.Marshal(pp)
				if err != nil {
					return err
				}
				_, err = cfg.Out.Write(out)
				return err
			case "json":
				enc := json.NewEncoder(cfg.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(pp)
			}
			printPlan(cfg.Out, &pp.Status, p, o.showManifests, o.diff)
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&o.files, "filename", "f", nil, "File of the proposed placement and/or overrides (YAML, several documents); - for stdin. Repeatable.")
	cmd.Flags().StringVar(&o.placement, "placement", "", "The existing placement to plan when FILE holds overrides only (-n for a ResourcePlacement).")
	cmd.Flags().StringVar(&o.staged, "staged-strategy", "", "A ClusterStagedUpdateStrategy: show the stages a staged update run with it would take.")
	cmd.Flags().BoolVar(&o.showManifests, "show-manifests", false, "Print each cluster's rendered objects.")
	cmd.Flags().BoolVar(&o.diff, "diff", false, "Print the diff of each changed object against what the cluster gets now.")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "yaml or json: print the PlacementPlan the hub answered.")
	return cmd
}

// request reads the files into a PlacementPlan.
func (o *planOptions) request(cfg *Config, stdin io.Reader) (*planv1beta1.PlacementPlan, error) {
	if len(o.files) == 0 {
		return nil, errors.New("give the proposed placement or overrides with -f FILE")
	}
	if o.output != "" && o.output != "yaml" && o.output != "json" {
		return nil, fmt.Errorf("-o must be yaml or json, got %q", o.output)
	}
	pp := &planv1beta1.PlacementPlan{}
	pp.GenerateName = "plan-"
	pp.Spec.StagedUpdateStrategyName = o.staged
	for _, f := range o.files {
		if err := addFile(&pp.Spec, f, stdin); err != nil {
			return nil, err
		}
	}
	if o.placement != "" {
		ns, _ := cfg.Namespace()
		pp.Spec.Placement = &planv1beta1.PlacementReference{Name: o.placement, Namespace: ns}
	}
	return pp, nil
}

// addFile adds the objects of file name ("-": stdin) to spec.
func addFile(spec *planv1beta1.PlacementPlanSpec, name string, stdin io.Reader) error {
	if name == "-" {
		return addDocuments(spec, name, stdin)
	}
	file, err := os.Open(name)
	if err != nil {
		return err
	}
	defer file.Close()
	return addDocuments(spec, name, file)
}

// addDocuments adds the objects of a YAML stream to spec by kind.
func addDocuments(spec *planv1beta1.PlacementPlanSpec, name string, r io.Reader) error {
	dec := utilyaml.NewYAMLReader(bufio.NewReader(r))
	for i := 1; ; i++ {
		doc, err := dec.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: failed to read document %d: %w", name, i, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			return fmt.Errorf("%s: document %d is not YAML: %w", name, i, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if u.GroupVersionKind().Group != placementv1beta1.GroupVersion.Group {
			return fmt.Errorf("%s: document %d is a %s: plan takes placements and overrides of %s", name, i, u.GroupVersionKind().Kind, placementv1beta1.GroupVersion.Group)
		}
		var into any
		switch u.GetKind() {
		case "ClusterResourcePlacement":
			spec.ClusterResourcePlacement = &placementv1beta1.ClusterResourcePlacement{}
			into = spec.ClusterResourcePlacement
		case "ResourcePlacement":
			spec.ResourcePlacement = &placementv1beta1.ResourcePlacement{}
			into = spec.ResourcePlacement
		case "ClusterResourceOverride":
			spec.ClusterResourceOverrides = append(spec.ClusterResourceOverrides, placementv1beta1.ClusterResourceOverride{})
			into = &spec.ClusterResourceOverrides[len(spec.ClusterResourceOverrides)-1]
		case "ResourceOverride":
			spec.ResourceOverrides = append(spec.ResourceOverrides, placementv1beta1.ResourceOverride{})
			into = &spec.ResourceOverrides[len(spec.ResourceOverrides)-1]
		default:
			return fmt.Errorf("%s: document %d is a %s: plan takes ClusterResourcePlacement, ResourcePlacement, ClusterResourceOverride and ResourceOverride", name, i, u.GetKind())
		}
		if err := yaml.UnmarshalStrict(doc, into); err != nil {
			return fmt.Errorf("%s: document %d (%s %s): %w", name, i, u.GetKind(), u.GetName(), err)
		}
	}
}

// printPlan writes a plan for people: the clusters with their decision and
// why, the rollout, and per cluster what changes.
func printPlan(out io.Writer, st *planv1beta1.PlacementPlanStatus, p painter, manifests, diffs bool) {
	verb := "new placement"
	if st.Exists {
		verb = "edit of the placement"
	}
	fmt.Fprintf(out, "%s\n", p.bold(fmt.Sprintf("Plan for %s (%s); nothing was changed.", st.Placement, verb)))
	if c := st.Scheduled; c != nil {
		fmt.Fprintf(out, "Scheduling: %s %s: %s.\n", p.status(c.Status), c.Reason, strings.TrimSuffix(c.Message, "."))
	}
	if st.ResourcesFrom != "" {
		fmt.Fprintf(out, "Resources: %d, from %s.\n", len(st.Resources), st.ResourcesFrom)
	}
	fmt.Fprintln(out, "\nClusters:")
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  CLUSTER\tDECISION\tCHANGES\tWHY")
	for _, c := range st.Clusters {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", c.Name, paintDecision(p, c.Decision), changesOf(c), strings.TrimSuffix(c.Reason, "."))
	}
	_ = tw.Flush()
	printRollout(out, st.Rollout)
	for _, c := range st.Clusters {
		if c.Decision == planv1beta1.DecisionNotSelected || (len(c.Manifests) == 0 && c.RenderError == "") {
			continue
		}
		fmt.Fprintf(out, "\n%s (%s):\n", p.bold(c.Name), c.Decision)
		if c.RenderError != "" {
			fmt.Fprintf(out, "  %s: %s; the cluster would keep what it has.\n", p.bad("cannot render"), c.RenderError)
			continue
		}
		if len(c.Overrides) > 0 {
			fmt.Fprintf(out, "  overrides: %s\n", strings.Join(c.Overrides, ", "))
		}
		for _, m := range c.Manifests {
			line := fmt.Sprintf("  %-9s %s", m.Change, describeID(m.ResourceIdentifier))
			if m.Forbidden != "" {
				line += " (" + p.warn("hidden") + ": " + m.Forbidden + ")"
			}
			switch m.Member {
			case "":
			case planv1beta1.MemberUnknown:
				line += "; on the member: " + p.warn("unknown") + " (" + m.MemberDiff + ")"
			case planv1beta1.MemberDiffers:
				line += "; on the member: " + p.warn("differs")
			default:
				line += "; on the member: " + strings.ToLower(string(m.Member))
			}
			fmt.Fprintln(out, line)
			if diffs && m.Diff != "" {
				fmt.Fprint(out, indent(m.Diff, "      "))
			}
			if diffs && m.Member == planv1beta1.MemberDiffers {
				fmt.Fprint(out, indent(strings.Replace(m.MemberDiff, "--- now", "--- on the member", 1), "      "))
			}
			if manifests && m.Object != nil && m.Change != planv1beta1.ChangeDelete {
				if y, err := yaml.JSONToYAML(m.Object.Raw); err == nil {
					fmt.Fprint(out, indent(string(y), "      "))
				}
			}
		}
		if c.ManifestsTruncated {
			fmt.Fprintf(out, "  ... more objects left out (a plan lists at most %d objects, %d KiB, per cluster)\n",
				planv1beta1.MaxManifestsPerCluster, planv1beta1.MaxManifestBytesPerCluster>>10)
		}
		if c.ComparedWith != "" {
			fmt.Fprintf(out, "  %s\n", p.faint("changes are against "+c.ComparedWith))
		}
		if c.MemberUnread != "" {
			fmt.Fprintf(out, "  %s\n", p.faint("the member's objects were "+c.MemberUnread))
		}
	}
	for _, w := range st.Warnings {
		fmt.Fprintf(out, "\n%s %s\n", p.warn("Warning:"), w)
	}
}

func printRollout(out io.Writer, r *planv1beta1.RolloutPlan) {
	if r == nil {
		return
	}
	fmt.Fprintf(out, "\nRollout (%s):\n", r.Strategy)
	for i, w := range r.Waves {
		var parts []string
		for _, x := range []struct {
			what     string
			clusters []string
		}{{"bind", w.Bind}, {"update", w.Update}, {"remove", w.Remove}} {
			if len(x.clusters) > 0 {
				parts = append(parts, x.what+" "+strings.Join(x.clusters, ", "))
			}
		}
		fmt.Fprintf(out, "  wave %d: %s\n", i+1, strings.Join(parts, "; "))
	}
	for i, s := range r.Stages {
		line := fmt.Sprintf("  stage %d %s: %s", i+1, s.Name, strings.Join(s.Clusters, ", "))
		if len(s.Clusters) == 0 {
			line = fmt.Sprintf("  stage %d %s: no cluster", i+1, s.Name)
		}
		for _, t := range s.AfterStageTasks {
			line += ", then " + string(t)
		}
		fmt.Fprintln(out, line)
	}
	if r.Message != "" {
		fmt.Fprintf(out, "  (%s)\n", r.Message)
	}
}

func paintDecision(p painter, d planv1beta1.Decision) string {
	switch d {
	case planv1beta1.DecisionSelected:
		return p.good(string(d))
	case planv1beta1.DecisionDropped:
		return p.bad(string(d))
	case planv1beta1.DecisionNotSelected:
		return p.faint(string(d))
	}
	return string(d)
}

// changesOf counts a cluster's object changes, e.g. "2 create, 1 update".
func changesOf(c planv1beta1.ClusterPlan) string {
	if c.RenderError != "" {
		return "cannot render"
	}
	count := map[planv1beta1.Change]int{}
	for _, m := range c.Manifests {
		count[m.Change]++
	}
	var parts []string
	for _, ch := range []planv1beta1.Change{planv1beta1.ChangeCreate, planv1beta1.ChangeUpdate, planv1beta1.ChangeDelete} {
		if n := count[ch]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, strings.ToLower(string(ch))))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

func describeID(id placementv1beta1.ResourceIdentifier) string {
	if id.Namespace != "" {
		return fmt.Sprintf("%s %s/%s", id.Kind, id.Namespace, id.Name)
	}
	return fmt.Sprintf("%s %s", id.Kind, id.Name)
}

func indent(s, prefix string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	if !strings.HasSuffix(b.String(), "\n") && b.Len() > 0 {
		b.WriteString("\n")
	}
	return b.String()
}
