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
	"bytes"
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

//go:embed console
var consoleFiles embed.FS

// console serves the web console. Every read and every action goes to the
// hub with the credentials it was made with (the user's), so the user's RBAC
// applies; a refusal is shown as the hub's message.
type console struct {
	c      client.WithWatch
	dc     dynamic.Interface
	pages  map[string]*template.Template
	static http.Handler
	// host is the address the console serves on ("127.0.0.1:PORT"): a
	// request for another host is refused, so that a page of another site
	// cannot read the console through a DNS name that points at 127.0.0.1.
	host string
	// token is in every form; a POST without it is refused.
	token string
	now   func() time.Time
	// live is the shortest time between two refreshes a page is told of.
	live time.Duration
}

func newConsole(c client.WithWatch, dc dynamic.Interface, host string, now func() time.Time) (*console, error) {
	token, err := newToken()
	if err != nil {
		return nil, err
	}
	pages, err := parseConsolePages()
	if err != nil {
		return nil, err
	}
	static, err := fs.Sub(consoleFiles, "console/static")
	if err != nil {
		return nil, err
	}
	return &console{c: c, dc: dc, pages: pages, static: http.FileServerFS(static), host: host, token: token, now: now, live: defaultConsoleLiveInterval}, nil
}

// consoleFuncs are the templates' helpers.
var consoleFuncs = template.FuncMap{
	"pathEscape": url.PathEscape,
	"lower":      strings.ToLower,
}

// parseConsolePages parses every page with the layout it renders into.
func parseConsolePages() (map[string]*template.Template, error) {
	names, err := fs.Glob(consoleFiles, "console/pages/*.html")
	if err != nil {
		return nil, err
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		t, err := template.New("layout.html").Funcs(consoleFuncs).ParseFS(consoleFiles, "console/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("console template %s: %w", n, err)
		}
		out[strings.TrimSuffix(strings.TrimPrefix(n, "console/pages/"), ".html")] = t
	}
	return out, nil
}

func (s *console) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.fleetPage)
	mux.HandleFunc("GET /matrix", s.matrixFragment)
	mux.HandleFunc("GET /placements/{name}", s.placementPage)
	mux.HandleFunc("GET /namespaces/{ns}/placements/{name}", s.placementPage)
	mux.HandleFunc("GET /placements/{name}/why/{cluster}", s.whyPage)
	mux.HandleFunc("GET /namespaces/{ns}/placements/{name}/why/{cluster}", s.whyPage)
	mux.HandleFunc("GET /clusters/{name}", s.clusterPage)
	mux.HandleFunc("GET /clusters/{name}/{action}", s.confirmPage)
	mux.HandleFunc("POST /clusters/{name}/{action}", s.clusterAction)
	mux.HandleFunc("POST /approvals/{name}", s.approveAction)
	mux.HandleFunc("GET /live", s.liveEvents)
	mux.Handle("GET /static/", http.StripPrefix("/static/", s.static))
	mux.Handle("GET /favicon.ico", http.RedirectHandler("/static/favicon.svg", http.StatusMovedPermanently))
	return s.guard(mux)
}

// guard refuses requests for another host and posts without the form token,
// and sets the headers every response carries.
func (s *console) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if r.Host != s.host {
			http.Error(w, "this console answers only to "+s.host, http.StatusMisdirectedRequest)
			return
		}
		if r.Method == http.MethodPost {
			if subtle.ConstantTimeCompare([]byte(r.PostFormValue("token")), []byte(s.token)) != 1 {
				http.Error(w, "the form's token is missing or out of date: reload the page and try again", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// page is what every page's layout reads.
type page struct {
	Title string
	Token string
	// Notes are problems the page met but went on past, such as a kind the
	// user may not list.
	Notes []string
	Data  any
}

// render writes a page; a template error is the console's own bug.
func (s *console) render(w http.ResponseWriter, status int, name string, title string, notes []string, data any) {
	s.renderTemplate(w, status, name, "layout.html", page{Title: title, Token: s.token, Notes: notes, Data: data})
}

func (s *console) renderTemplate(w http.ResponseWriter, status int, pageName, tmpl string, data any) {
	var buf bytes.Buffer
	if fl, ok := data.(page); ok {
		if f, ok := fl.Data.(fleet); ok {
			// About 100 bytes a cell: grow once rather than by doubling.
			buf.Grow(4096 + 100*len(f.Matrix.Rows)*len(f.Matrix.Clusters))
		}
	} else if f, ok := data.(fleet); ok {
		buf.Grow(4096 + 100*len(f.Matrix.Rows)*len(f.Matrix.Clusters))
	}
	if err := s.pages[pageName].ExecuteTemplate(&buf, tmpl, data); err != nil {
		http.Error(w, "console: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail renders an error page: the hub's refusal keeps its status (403, 404).
func (s *console) fail(w http.ResponseWriter, err error) {
	status := http.StatusBadGateway
	var se apierrors.APIStatus
	if errors.As(err, &se) && se.Status().Code != 0 {
		status = int(se.Status().Code)
	}
	s.render(w, status, "message", http.StatusText(status), nil, messageData{Text: err.Error(), Bad: true, Back: "/"})
}

// messageData is a message page: what happened, whether it is bad news, and
// where to go back to.
type messageData struct {
	Text string
	Bad  bool
	Back string
}

// fleet is what the fleet page and the matrix fragment read.
type fleet struct {
	Matrix     matrix
	States     []cellState
	Namespaces []string
	Notes      []string
}

// loadFleet reads the placements and member clusters the user may list.
// A kind the user may not list is a note, not an error.
func (s *console) loadFleet(ctx context.Context, f matrixFilter) (fleet, error) {
	var notes []string
	forbidden := func(what string, err error) bool {
		if apierrors.IsForbidden(err) {
			notes = append(notes, fmt.Sprintf("You may not list %s: %s", what, apierrors.ReasonForError(err)))
			return true
		}
		return false
	}
	var placements []*loadedPlacement
	nsSet := map[string]bool{}
	crps := &placementv1beta1.ClusterResourcePlacementList{}
	if err := s.c.List(ctx, crps); err != nil && !forbidden("ClusterResourcePlacements", err) {
		return fleet{}, fmt.Errorf("failed to list ClusterResourcePlacements: %w", err)
	}
	for i := range crps.Items {
		p := &crps.Items[i]
		placements = append(placements, &loadedPlacement{ref: placementRef{Name: p.Name}, obj: p, spec: &p.Spec, stat: &p.Status})
	}
	rps := &placementv1beta1.ResourcePlacementList{}
	if err := s.c.List(ctx, rps); err != nil && !forbidden("ResourcePlacements in every namespace", err) {
		return fleet{}, fmt.Errorf("failed to list ResourcePlacements: %w", err)
	}
	for i := range rps.Items {
		p := &rps.Items[i]
		nsSet[p.Namespace] = true
		placements = append(placements, &loadedPlacement{ref: placementRef{Namespace: p.Namespace, Name: p.Name}, obj: p, spec: &p.Spec, stat: &p.Status})
	}
	mcs := &clusterv1beta1.MemberClusterList{}
	var mcOpts []client.ListOption
	if f.Clusters != nil {
		mcOpts = append(mcOpts, client.MatchingLabelsSelector{Selector: f.Clusters})
	}
	if err := s.c.List(ctx, mcs, mcOpts...); err != nil && !forbidden("MemberClusters", err) {
		return fleet{}, fmt.Errorf("failed to list MemberClusters: %w", err)
	}
	held := map[string]int{}
	if bs, err := listBindings(ctx, s.c, "*"); err == nil {
		for _, b := range bs {
			if b.Active {
				held[b.Cluster]++
			}
		}
	} else if !forbidden("bindings", err) {
		return fleet{}, err
	}
	leases := replicaLeases(ctx, s.c)
	now := s.now()
	cols := clusterColumns(mcs.Items, held, func(mc *clusterv1beta1.MemberCluster) string { return lastSeen(mc, leases, now) })
	var nss []string
	for ns := range nsSet {
		nss = append(nss, ns)
	}
	sort.Strings(nss)
	return fleet{Matrix: buildMatrix(placements, cols, f), States: cellStates, Namespaces: nss, Notes: notes}, nil
}

// readFilter reads the matrix filter from the query.
func readFilter(r *http.Request) (matrixFilter, error) {
	q := r.URL.Query()
	f := matrixFilter{Namespace: q.Get("ns")}
	if l := q.Get("label"); l != "" {
		sel, err := labels.Parse(l)
		if err != nil {
			return f, fmt.Errorf("the label filter %q is not a label selector: %w", l, err)
		}
		f.Labels = sel
	}
	if l := q.Get("clusters"); l != "" {
		sel, err := labels.Parse(l)
		if err != nil {
			return f, fmt.Errorf("the cluster filter %q is not a label selector: %w", l, err)
		}
		f.Clusters = sel
	}
	if st := q.Get("state"); st != "" {
		found := false
		for _, s := range cellStates {
			if string(s) == st {
				f.State, found = s, true
			}
		}
		if !found {
			return f, fmt.Errorf("the state filter %q is not one of %v", st, cellStates)
		}
	}
	return f, nil
}

func (s *console) fleetPage(w http.ResponseWriter, r *http.Request) {
	f, err := readFilter(r)
	if err != nil {
		s.render(w, http.StatusBadRequest, "message", "Bad filter", nil, messageData{Text: err.Error(), Bad: true, Back: "/"})
		return
	}
	fl, err := s.loadFleet(r.Context(), f)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, http.StatusOK, "fleet", "Fleet", fl.Notes, fl)
}

// matrixFragment is the matrix alone, for the page's live updates.
func (s *console) matrixFragment(w http.ResponseWriter, r *http.Request) {
	f, err := readFilter(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	fl, err := s.loadFleet(r.Context(), f)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	s.renderTemplate(w, http.StatusOK, "fleet", "matrix", fl)
}

// placementData is what the placement page reads.
type placementData struct {
	Ref       placementRef
	Link      string
	Tree      *node
	Resources []string
	Clusters  []placementCluster
	Rollout   *rolloutData
	Runs      []runData
}

// rolloutData is where a rolling update stands: the clusters it moved to the
// placement's latest resources, in the order they started, and those it holds
// back for a later wave.
type rolloutData struct {
	Index string
	Moved []string
	Held  []string
}

// rollout reads a rolling update's progress from the per-cluster
// RolloutStarted conditions; nil for an External strategy (its runs say).
func rollout(pl *loadedPlacement, now time.Time) *rolloutData {
	if pl.spec.Strategy.Type == placementv1beta1.ExternalRolloutStrategyType {
		return nil
	}
	r := &rolloutData{Index: pl.stat.ObservedResourceIndex}
	type moved struct {
		at   time.Time
		line string
	}
	var ms []moved
	for i := range pl.stat.PlacementStatuses {
		ps := &pl.stat.PlacementStatuses[i]
		c := findCondition(ps.Conditions, placementv1beta1.ConditionRolloutStarted)
		if ps.ClusterName == "" || c == nil {
			continue
		}
		switch c.Status {
		case metav1.ConditionTrue:
			line := ps.ClusterName
			if a := age(now, c.LastTransitionTime); a != "" {
				line += " (started " + a + ")"
			}
			ms = append(ms, moved{c.LastTransitionTime.Time, line})
		default:
			r.Held = append(r.Held, ps.ClusterName+": "+conditionSentence(c))
		}
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].at.Before(ms[j].at) })
	for _, m := range ms {
		r.Moved = append(r.Moved, m.line)
	}
	if len(r.Moved) == 0 && len(r.Held) == 0 {
		return nil
	}
	return r
}

// placementCluster is a cluster's section of the placement page.
type placementCluster struct {
	Name   string
	State  cellState
	Reason string
	Why    string
}

type runData struct {
	Name, State string
	Conditions  []string
	Stages      []stageData
}

type stageData struct {
	Name       string
	Start, End string
	Clusters   []string
	Approvals  []approvalData
	Conditions []string
}

type approvalData struct {
	Name     string
	Approved bool
}

func refFromPath(r *http.Request) placementRef {
	return placementRef{Namespace: r.PathValue("ns"), Name: r.PathValue("name")}
}

func (s *console) placementPage(w http.ResponseWriter, r *http.Request) {
	ref := refFromPath(r)
	ctx := r.Context()
	pl, err := getPlacement(ctx, s.c, ref)
	if err != nil {
		s.fail(w, err)
		return
	}
	now := s.now()
	d := placementData{Ref: ref, Link: placementLink(ref), Tree: statusTree(pl, painter{}, now)}
	for _, id := range pl.stat.SelectedResources {
		d.Resources = append(d.Resources, resourceString(id))
	}
	var notes []string
	mcs := &clusterv1beta1.MemberClusterList{}
	connected := map[string]bool{}
	if err := s.c.List(ctx, mcs); err != nil {
		notes = append(notes, "The member clusters could not be read: "+err.Error())
	}
	for i := range mcs.Items {
		st, _ := clusterState(&mcs.Items[i])
		connected[mcs.Items[i].Name] = st != "Disconnected"
	}
	for i := range pl.stat.PlacementStatuses {
		ps := &pl.stat.PlacementStatuses[i]
		if ps.ClusterName == "" {
			continue
		}
		conn, known := connected[ps.ClusterName]
		state, reason := decideCell(ps, pl.obj.GetGeneration(), conn || !known)
		d.Clusters = append(d.Clusters, placementCluster{Name: ps.ClusterName, State: state, Reason: reason, Why: d.Link + "/why/" + url.PathEscape(ps.ClusterName)})
	}
	d.Rollout = rollout(pl, now)
	if ref.Namespace == "" {
		runs, err := s.loadRuns(ctx, ref.Name, now)
		if err != nil {
			notes = append(notes, err.Error())
		}
		d.Runs = runs
	}
	s.render(w, http.StatusOK, "placement", ref.String(), notes, d)
}

// loadRuns reads the staged update runs of a ClusterResourcePlacement, newest
// first, with their approval requests.
func (s *console) loadRuns(ctx context.Context, placement string, now time.Time) ([]runData, error) {
	list := &placementv1beta1.ClusterStagedUpdateRunList{}
	if err := s.c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("the staged update runs could not be read: %w", err)
	}
	approved := map[string]bool{}
	approvals := &placementv1beta1.ClusterApprovalRequestList{}
	if err := s.c.List(ctx, approvals); err != nil {
		return nil, fmt.Errorf("the approval requests could not be read: %w", err)
	}
	for i := range approvals.Items {
		approved[approvals.Items[i].Name] = conditions.IsTrue(approvals.Items[i].Status.Conditions, conditionApproved)
	}
	sort.Slice(list.Items, func(i, j int) bool {
		return list.Items[j].CreationTimestamp.Before(&list.Items[i].CreationTimestamp)
	})
	var out []runData
	for i := range list.Items {
		run := &list.Items[i]
		if run.Spec.PlacementName != placement {
			continue
		}
		rd := runData{Name: run.Name, State: string(run.Spec.State), Conditions: conditionLines(run.Status.Conditions, now)}
		for _, st := range run.Status.StagesStatus {
			sd := stageData{Name: st.StageName, Start: timeOrDash(st.StartTime, now), End: timeOrDash(st.EndTime, now), Conditions: conditionLines(st.Conditions, now)}
			for _, c := range st.Clusters {
				line := c.ClusterName
				if c.ResourceSnapshotIndex != "" {
					line += " (resource index " + c.ResourceSnapshotIndex + ")"
				}
				if cs := conditionLines(c.Conditions, now); len(cs) > 0 {
					line += ": " + cs[len(cs)-1]
				}
				sd.Clusters = append(sd.Clusters, line)
			}
			for _, t := range st.AfterStageTaskStatus {
				if t.ApprovalRequestName != "" {
					sd.Approvals = append(sd.Approvals, approvalData{Name: t.ApprovalRequestName, Approved: approved[t.ApprovalRequestName]})
				}
			}
			rd.Stages = append(rd.Stages, sd)
		}
		out = append(out, rd)
	}
	return out, nil
}

func conditionLines(conds []metav1.Condition, now time.Time) []string {
	var out []string
	for i := range conds {
		line := conditionSentence(&conds[i])
		if a := age(now, conds[i].LastTransitionTime); a != "" {
			line += " — " + a
		}
		out = append(out, line)
	}
	return out
}

func timeOrDash(t *metav1.Time, now time.Time) string {
	if t == nil {
		return "—"
	}
	return t.UTC().Format(time.RFC3339) + " (" + age(now, *t) + ")"
}

type whyData struct {
	Ref     placementRef
	Link    string
	Cluster string
	Text    string
}

func (s *console) whyPage(w http.ResponseWriter, r *http.Request) {
	ref := refFromPath(r)
	cluster := r.PathValue("cluster")
	var buf bytes.Buffer
	if err := printWhy(r.Context(), s.c, ref, cluster, &buf, painter{}, s.now()); err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, http.StatusOK, "why", "Why "+ref.Name+" on "+cluster, nil, whyData{Ref: ref, Link: placementLink(ref), Cluster: cluster, Text: buf.String()})
}

// clusterData is what the cluster page reads.
type clusterData struct {
	Column     clusterColumn
	Cordoned   bool
	Conditions []string
	Properties []string
	Taints     []string
	Placements []clusterPlacement
	Events     []string
}

type clusterPlacement struct {
	Name, Link string
	State      cellState
	Reason     string
}

func (s *console) clusterPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	name := r.PathValue("name")
	mc := &clusterv1beta1.MemberCluster{}
	if err := s.c.Get(ctx, types.NamespacedName{Name: name}, mc); err != nil {
		s.fail(w, err)
		return
	}
	now := s.now()
	var notes []string
	leases := replicaLeases(ctx, s.c)
	cols := clusterColumns([]clusterv1beta1.MemberCluster{*mc}, nil, func(mc *clusterv1beta1.MemberCluster) string { return lastSeen(mc, leases, now) })
	d := clusterData{Column: cols[0], Conditions: conditionLines(mc.Status.Conditions, now)}
	for _, t := range mc.Spec.Taints {
		d.Taints = append(d.Taints, taintString(t))
		if isCordonTaint(t) {
			d.Cordoned = true
		}
	}
	var keys []string
	for k := range mc.Status.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		d.Properties = append(d.Properties, k+" = "+mc.Status.Properties[k].Value)
	}
	fl, err := s.loadFleet(ctx, matrixFilter{})
	if err != nil {
		notes = append(notes, err.Error())
	}
	notes = append(notes, fl.Notes...)
	for i := range fl.Matrix.Rows {
		row := &fl.Matrix.Rows[i]
		for _, c := range row.Cells {
			if c.Cluster != name || c.State == cellNotSelected {
				continue
			}
			label := row.Name
			if row.Namespace != "" {
				label = row.Namespace + "/" + row.Name
			}
			d.Placements = append(d.Placements, clusterPlacement{Name: label, Link: row.CellLink(c), State: c.State, Reason: c.Reason})
		}
	}
	events := &corev1.EventList{}
	if err := s.c.List(ctx, events, client.MatchingFields{"involvedObject.kind": "MemberCluster", "involvedObject.name": name}); err != nil {
		notes = append(notes, "The cluster's Events could not be read: "+err.Error())
	}
	sort.Slice(events.Items, func(i, j int) bool { return eventTime(&events.Items[j]).Before(eventTime(&events.Items[i])) })
	for i := range events.Items {
		if i == 20 {
			break
		}
		e := &events.Items[i]
		d.Events = append(d.Events, fmt.Sprintf("%s %s %s: %s", age(now, metav1.NewTime(eventTime(e))), e.Type, e.Reason, e.Message))
	}
	s.render(w, http.StatusOK, "cluster", "Member cluster "+name, notes, d)
}

func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

type confirmData struct {
	Cluster, Action, Text string
}

func clusterActionText(action, cluster string) (string, bool) {
	switch action {
	case "cordon":
		return "Cordon member cluster " + cluster + "? No new placements go there; what it holds stays.", true
	case "uncordon":
		return "Uncordon member cluster " + cluster + "? Placements may go there again, and its drain evictions are deleted.", true
	}
	return "", false
}

// confirmPage asks before a cordon or an uncordon.
func (s *console) confirmPage(w http.ResponseWriter, r *http.Request) {
	name, action := r.PathValue("name"), r.PathValue("action")
	text, ok := clusterActionText(action, name)
	if !ok {
		http.NotFound(w, r)
		return
	}
	s.render(w, http.StatusOK, "confirm", strings.ToUpper(action[:1])+action[1:]+" "+name, nil, confirmData{Cluster: name, Action: action, Text: text})
}

func (s *console) clusterAction(w http.ResponseWriter, r *http.Request) {
	name, action := r.PathValue("name"), r.PathValue("action")
	if _, ok := clusterActionText(action, name); !ok {
		http.NotFound(w, r)
		return
	}
	var out bytes.Buffer
	d := &drainer{c: s.c, out: &out}
	var err error
	if action == "cordon" {
		err = d.cordon(r.Context(), name)
	} else {
		err = d.uncordon(r.Context(), name)
	}
	s.actionDone(w, err, out.String(), "/clusters/"+url.PathEscape(name))
}

func (s *console) approveAction(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	var out bytes.Buffer
	err := approve(r.Context(), s.dc, s.c.RESTMapper(), name, "approved in kubectl flotilla console", &out)
	back := r.PostFormValue("back")
	if !strings.HasPrefix(back, "/") || strings.HasPrefix(back, "//") {
		back = "/"
	}
	s.actionDone(w, err, out.String(), back)
}

// actionDone shows what an action did, or the hub's refusal with its status.
func (s *console) actionDone(w http.ResponseWriter, err error, out, back string) {
	if err != nil {
		status := http.StatusBadGateway
		var se apierrors.APIStatus
		if errors.As(err, &se) && se.Status().Code != 0 {
			status = int(se.Status().Code)
		}
		heading := "Refused"
		if status != http.StatusForbidden {
			heading = "Failed"
		}
		s.render(w, status, "message", heading, nil, messageData{Text: err.Error(), Bad: true, Back: back})
		return
	}
	s.render(w, http.StatusOK, "message", "Done", nil, messageData{Text: strings.TrimSpace(out), Back: back})
}

// liveEvents tells a page, as server-sent events, each time the fleet
// changes: it watches placements, member clusters and staged update runs with
// the user's credentials, and sends at most one "change" per live interval.
func (s *console) liveEvents(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported", http.StatusInternalServerError)
		return
	}
	ctx := r.Context()
	changed := make(chan struct{}, 1)
	lists := []client.ObjectList{
		&placementv1beta1.ClusterResourcePlacementList{},
		&placementv1beta1.ResourcePlacementList{},
		&clusterv1beta1.MemberClusterList{},
		&placementv1beta1.ClusterStagedUpdateRunList{},
	}
	started := 0
	for _, l := range lists {
		wi, err := s.c.Watch(ctx, l)
		if err != nil {
			continue // a kind the user may not watch does not refresh the page
		}
		started++
		go func(wi watch.Interface) {
			defer wi.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case _, ok := <-wi.ResultChan():
					if !ok {
						return
					}
					select {
					case changed <- struct{}{}:
					default:
					}
				}
			}
		}(wi)
	}
	if started == 0 {
		http.Error(w, "you may not watch any of the fleet's kinds", http.StatusForbidden)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, ": watching\n\n")
	flusher.Flush()
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
		if _, err := io.WriteString(w, "event: change\ndata: {}\n\n"); err != nil {
			return
		}
		flusher.Flush()
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.live):
		}
	}
}
