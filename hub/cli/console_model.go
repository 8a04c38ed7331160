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
	"html"
	"html/template"
	"net/url"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// cellState is what one placement has on one member cluster, in one word: a
// cell of the console's fleet matrix.
type cellState string

// The cell states. Each has a class (its colour in console.css) and a short
// text, so that no state is told by colour alone.
const (
	cellAvailable    cellState = "Available"
	cellProgressing  cellState = "Progressing"
	cellWaiting      cellState = "Waiting"
	cellFailed       cellState = "Failed"
	cellDrifted      cellState = "Drifted"
	cellDiffReported cellState = "DiffReported"
	cellNotSelected  cellState = "NotSelected"
	cellDisconnected cellState = "Disconnected"
)

// cellStates lists the states in the order the legend and the state filter
// show them.
var cellStates = []cellState{cellAvailable, cellProgressing, cellWaiting, cellFailed, cellDrifted, cellDiffReported, cellDisconnected, cellNotSelected}

// Short is the text a cell shows.
func (s cellState) Short() string {
	switch s {
	case cellAvailable:
		return "ok"
	case cellProgressing:
		return "…"
	case cellWaiting:
		return "wait"
	case cellFailed:
		return "fail"
	case cellDrifted:
		return "drift"
	case cellDiffReported:
		return "diff"
	case cellDisconnected:
		return "disc"
	}
	return "—"
}

// Class is the CSS class of the state.
func (s cellState) Class() string { return "s-" + strings.ToLower(string(s)) }

// cell is one placement on one cluster.
type cell struct {
	Cluster string
	State   cellState
	// Reason says why the cell is in its state, in a sentence.
	Reason string
}

// decideCell sums up what a placement has on a cluster. ps is the cluster's
// entry of the placement's status.placementStatuses (nil when the placement
// has none for it); gen is the placement's generation; connected is whether
// the cluster's agent is connected (false only when the hub says it is not).
//
// Rules, first match wins:
//  1. No entry: NotSelected (the scheduler did not pick the cluster).
//  2. The agent is disconnected: Disconnected; what the hub last heard is
//     not current.
//  3. A per-cluster condition is False (other than RolloutStarted), or a
//     manifest failed: Failed, with the first such condition or manifest.
//  4. A manifest drifted: Drifted. 5. A manifest differs (ReportDiff): DiffReported.
//  6. RolloutStarted is False (a rolling update holds the cluster back), or
//     Unknown because an external rollout (a staged update run) has not
//     moved it yet: Waiting.
//  7. Available is True for the current generation: Available.
//  8. Otherwise Progressing, naming the first condition not yet True.
func decideCell(ps *placementv1beta1.PerClusterPlacementStatus, gen int64, connected bool) (cellState, string) {
	if ps == nil {
		return cellNotSelected, "not selected"
	}
	if !connected {
		return cellDisconnected, "the cluster's agent is disconnected: its last report may be out of date"
	}
	for _, t := range placementv1beta1.PerClusterConditionTypes() {
		if t == placementv1beta1.ConditionRolloutStarted {
			continue
		}
		if c := findCondition(ps.Conditions, t); c != nil && c.Status == metav1.ConditionFalse {
			return cellFailed, conditionSentence(c)
		}
	}
	if len(ps.FailedPlacements) > 0 {
		f := ps.FailedPlacements[0]
		return cellFailed, fmt.Sprintf("%s failed: %s", resourceString(f.ResourceIdentifier), conditionSentence(&f.Condition))
	}
	if n := len(ps.DriftedPlacements); n > 0 {
		return cellDrifted, fmt.Sprintf("%d %s drifted, first %s", n, plural(n, "manifest", "manifests"), resourceString(ps.DriftedPlacements[0].ResourceIdentifier))
	}
	if n := len(ps.DiffedPlacements); n > 0 {
		return cellDiffReported, fmt.Sprintf("%d %s from the hub, first %s", n, plural(n, "manifest differs", "manifests differ"), resourceString(ps.DiffedPlacements[0].ResourceIdentifier))
	}
	if c := findCondition(ps.Conditions, placementv1beta1.ConditionRolloutStarted); c != nil &&
		(c.Status == metav1.ConditionFalse || c.Status == metav1.ConditionUnknown && c.Reason == placementv1beta1.ReasonRolloutControlledExternally) {
		return cellWaiting, conditionSentence(c)
	}
	if c := findCondition(ps.Conditions, placementv1beta1.ConditionAvailable); c != nil && c.Status == metav1.ConditionTrue {
		if c.ObservedGeneration != 0 && c.ObservedGeneration < gen {
			return cellProgressing, fmt.Sprintf("Available for generation %d; generation %d not yet reported", c.ObservedGeneration, gen)
		}
		// The message alone: the state says Available, and a cell of a
		// large matrix should not cost a new string.
		if c.Message == "" {
			return cellAvailable, "available"
		}
		return cellAvailable, c.Message
	}
	for _, t := range placementv1beta1.PerClusterConditionTypes() {
		c := findCondition(ps.Conditions, t)
		if c == nil {
			return cellProgressing, "waiting for " + t
		}
		if c.Status != metav1.ConditionTrue {
			return cellProgressing, conditionSentence(c)
		}
	}
	return cellProgressing, "in progress"
}

func findCondition(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// conditionSentence writes a condition as "Type Status (Reason): Message".
func conditionSentence(c *metav1.Condition) string {
	s := c.Type + " " + string(c.Status)
	if c.Reason != "" {
		s += " (" + c.Reason + ")"
	}
	if c.Message != "" {
		s += ": " + c.Message
	}
	return s
}

// matrixFilter selects the matrix's rows: by namespace ("" every placement,
// "-" ClusterResourcePlacements only, else ResourcePlacements of that
// namespace), by the placements' labels, and by a state some cell of the row
// must be in; and its columns, by the member clusters' labels.
type matrixFilter struct {
	Namespace string
	Labels    labels.Selector
	State     cellState
	Clusters  labels.Selector
}

// Query writes the filter as URL query parameters.
func (f matrixFilter) Query() string {
	v := url.Values{}
	if f.Namespace != "" {
		v.Set("ns", f.Namespace)
	}
	if f.Labels != nil && !f.Labels.Empty() {
		v.Set("label", f.Labels.String())
	}
	if f.State != "" {
		v.Set("state", string(f.State))
	}
	if f.Clusters != nil && !f.Clusters.Empty() {
		v.Set("clusters", f.Clusters.String())
	}
	return v.Encode()
}

// clusterColumn is a member cluster: a column of the matrix and a row of the
// fleet's cluster table.
type clusterColumn struct {
	Name      string
	State     string
	Good      bool
	Connected bool
	Taints    string
	Agent     string
	LastSeen  string
	// Placements is how many placements the cluster holds.
	Placements int
}

// matrixRow is a placement: a row of the matrix.
type matrixRow struct {
	Kind, Namespace, Name string
	Link                  string
	Cells                 []cell
	// Counts is how many cells are in each state, in cellStates' order,
	// states with none left out.
	Counts []stateCount
	// Short is the number of clusters a PickN placement could not fill.
	Short string
}

type stateCount struct {
	State cellState
	N     int
}

// CellLink is the page that explains a cell: the placement page's section of
// the cluster, or why the placement is not there.
func (r *matrixRow) CellLink(c cell) string {
	if c.State == cellNotSelected {
		return r.Link + "/why/" + url.PathEscape(c.Cluster)
	}
	return r.Link + "#cluster-" + c.Cluster
}

// CellsHTML writes the row's cells. It is the one hot loop of the console (a
// page of 100 placements × 1 000 clusters has 100 000 cells), so it is written
// here rather than in a template, escaping every value as the template would.
// A cell is a link that explains it, with its state's short text and class;
// its title says why, except for Available, which says so in its text.
func (r *matrixRow) CellsHTML() template.HTML {
	var b strings.Builder
	link := html.EscapeString(r.Link)
	size := 0
	for _, c := range r.Cells {
		size += 80 + len(link) + 2*len(c.Cluster)
		if c.State != cellAvailable {
			size += len(c.Reason) + 8
		}
	}
	b.Grow(size)
	for _, c := range r.Cells {
		name := html.EscapeString(c.Cluster)
		b.WriteString(`<td class="`)
		b.WriteString(c.State.Class())
		b.WriteString(`"><a href="`)
		b.WriteString(link)
		if c.State == cellNotSelected {
			b.WriteString("/why/")
			b.WriteString(html.EscapeString(url.PathEscape(c.Cluster)))
		} else {
			b.WriteString("#cluster-")
			b.WriteString(name)
		}
		b.WriteString(`" title="`)
		b.WriteString(name)
		if c.State != cellAvailable {
			b.WriteString(": ")
			b.WriteString(html.EscapeString(c.Reason))
		}
		b.WriteString(`">`)
		b.WriteString(c.State.Short())
		b.WriteString("</a></td>")
	}
	return template.HTML(b.String()) //nolint:gosec // every value above is escaped
}

// matrix is the fleet view: placements down, clusters across.
type matrix struct {
	Clusters []clusterColumn
	Rows     []matrixRow
	// Hidden is how many placements the filter left out.
	Hidden int
	Filter matrixFilter
}

// placementLink is the console's page of a placement.
func placementLink(ref placementRef) string {
	if ref.Namespace == "" {
		return "/placements/" + url.PathEscape(ref.Name)
	}
	return "/namespaces/" + url.PathEscape(ref.Namespace) + "/placements/" + url.PathEscape(ref.Name)
}

// buildMatrix lays the placements out against the clusters; clusters must be
// sorted by name. Placements are sorted ClusterResourcePlacements first, then
// by namespace and name.
func buildMatrix(placements []*loadedPlacement, clusters []clusterColumn, f matrixFilter) matrix {
	m := matrix{Clusters: clusters, Filter: f}
	connected := make(map[string]bool, len(clusters))
	for _, c := range clusters {
		connected[c.Name] = c.Connected
	}
	sorted := slices.Clone(placements)
	sort.Slice(sorted, func(i, j int) bool {
		a, b := sorted[i].ref, sorted[j].ref
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	for _, pl := range sorted {
		if !f.selects(pl) {
			m.Hidden++
			continue
		}
		row := matrixRow{Kind: pl.ref.Kind(), Namespace: pl.ref.Namespace, Name: pl.ref.Name, Link: placementLink(pl.ref)}
		byCluster := make(map[string]*placementv1beta1.PerClusterPlacementStatus, len(pl.stat.PlacementStatuses))
		for i := range pl.stat.PlacementStatuses {
			ps := &pl.stat.PlacementStatuses[i]
			if ps.ClusterName == "" {
				if c := findCondition(ps.Conditions, placementv1beta1.ConditionScheduled); c != nil {
					row.Short = c.Message
				}
				continue
			}
			byCluster[ps.ClusterName] = ps
		}
		counts := map[cellState]int{}
		for _, c := range clusters {
			state, reason := decideCell(byCluster[c.Name], pl.obj.GetGeneration(), c.Connected)
			counts[state]++
			row.Cells = append(row.Cells, cell{Cluster: c.Name, State: state, Reason: reason})
		}
		if f.State != "" && counts[f.State] == 0 {
			m.Hidden++
			continue
		}
		for _, s := range cellStates {
			if counts[s] > 0 {
				row.Counts = append(row.Counts, stateCount{State: s, N: counts[s]})
			}
		}
		m.Rows = append(m.Rows, row)
	}
	return m
}

// LabelString is the placements' label filter, or "".
func (f matrixFilter) LabelString() string { return selectorString(f.Labels) }

// ClusterString is the clusters' label filter, or "".
func (f matrixFilter) ClusterString() string { return selectorString(f.Clusters) }

func selectorString(s labels.Selector) string {
	if s == nil || s.Empty() {
		return ""
	}
	return s.String()
}

// selects reports whether the filter's namespace and labels select the
// placement (the state is decided on the row's cells).
func (f matrixFilter) selects(pl *loadedPlacement) bool {
	switch f.Namespace {
	case "":
	case "-":
		if pl.ref.Namespace != "" {
			return false
		}
	default:
		if pl.ref.Namespace != f.Namespace {
			return false
		}
	}
	return f.Labels == nil || f.Labels.Matches(labels.Set(pl.obj.GetLabels()))
}

// clusterColumns turns member clusters into the matrix's columns, sorted by
// name; held counts the placements each holds, seen says when the hub last
// heard from one.
func clusterColumns(list []clusterv1beta1.MemberCluster, held map[string]int, seen func(*clusterv1beta1.MemberCluster) string) []clusterColumn {
	out := make([]clusterColumn, 0, len(list))
	for i := range list {
		mc := &list[i]
		state, good := clusterState(mc)
		taints := "<none>"
		if len(mc.Spec.Taints) > 0 {
			var ts []string
			for _, t := range mc.Spec.Taints {
				ts = append(ts, taintString(t))
			}
			taints = strings.Join(ts, ",")
		}
		out = append(out, clusterColumn{
			Name: mc.Name, State: state, Good: good, Connected: state != "Disconnected",
			Taints: taints, Agent: orNone(mc.Status.AgentVersion), LastSeen: seen(mc), Placements: held[mc.Name],
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Text is the node's line, for the console's templates.
func (n *node) Text() string { return n.text }

// Kids are the lines under the node, for the console's templates.
func (n *node) Kids() []*node { return n.children }
