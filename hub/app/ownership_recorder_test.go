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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
)

// pipelineResources are the resources of the kinds the ownership table
// covers, by kind.
var pipelineResources = map[string]schema.GroupVersionResource{
	"ClusterResourcePlacement":        placementv1beta1.GroupVersion.WithResource("clusterresourceplacements"),
	"ResourcePlacement":               placementv1beta1.GroupVersion.WithResource("resourceplacements"),
	"ClusterSchedulingPolicySnapshot": placementv1beta1.GroupVersion.WithResource("clusterschedulingpolicysnapshots"),
	"SchedulingPolicySnapshot":        placementv1beta1.GroupVersion.WithResource("schedulingpolicysnapshots"),
	"ClusterResourceSnapshot":         placementv1beta1.GroupVersion.WithResource("clusterresourcesnapshots"),
	"ResourceSnapshot":                placementv1beta1.GroupVersion.WithResource("resourcesnapshots"),
	"ClusterResourceBinding":          placementv1beta1.GroupVersion.WithResource("clusterresourcebindings"),
	"ResourceBinding":                 placementv1beta1.GroupVersion.WithResource("resourcebindings"),
	"ClusterResourceOverride":         placementv1beta1.GroupVersion.WithResource("clusterresourceoverrides"),
	"ResourceOverride":                placementv1beta1.GroupVersion.WithResource("resourceoverrides"),
	"ClusterResourceOverrideSnapshot": placementv1beta1.GroupVersion.WithResource("clusterresourceoverridesnapshots"),
	"ResourceOverrideSnapshot":        placementv1beta1.GroupVersion.WithResource("resourceoverridesnapshots"),
	"Work":                            placementv1beta1.GroupVersion.WithResource("works"),
	"MemberCluster":                   clusterv1beta1.GroupVersion.WithResource("memberclusters"),
}

// writerPackages maps the hub's packages to the field manager setupHub gives
// their writes: a delete carries no field manager, so the recorder tells the
// deleter by the package on the stack of the request.
var writerPackages = map[string]string{
	"hub/placement":    pipeline.ManagerPlacement,
	"hub/scheduler":    pipeline.ManagerScheduler,
	"hub/failover":     pipeline.ManagerFailover,
	"hub/rollout":      pipeline.ManagerRollout,
	"hub/updaterun":    pipeline.ManagerUpdateRun,
	"hub/workgen":      pipeline.ManagerWorkGenerator,
	"hub/overrides":    pipeline.ManagerOverrideSnapshot,
	"hub/membership":   pipeline.ManagerMembership,
	"hub/join":         pipeline.ManagerJoin,
	"hub/tunnelserver": pipeline.ManagerTunnelServer,
	"hub/replica":      pipeline.ManagerReplicaSweeper,
	"hub/workcleanup":  pipeline.ManagerWorkCleanup,
	"hub/upsync":       pipeline.ManagerUpsync,
}

// rowID names one row of the ownership table: the table's kind and the row's
// index in it.
type rowID struct {
	kind  string
	index int
}

// ownershipRecorder watches every version of the pipeline objects a test
// makes (ours says which) and every write request of the hub, and keeps what
// disagrees with the ownership table and which rows were written.
//
// A row is observed when:
//   - a field row: a version of an object of its kind has its writer owning
//     the field or one below it in managedFields, or the writer's merge patch
//     of the kind's finalizers was seen (a finalizer removal owns nothing
//     afterwards);
//   - a delete row (HowDelete): the hub deleted an object of the kind from the
//     writer's package.
type ownershipRecorder struct {
	ours   func(namespace, name string) bool
	isUser func(manager string) bool

	mu       sync.Mutex
	problems map[string]bool
	observed map[rowID]bool
	// exempted rows need not be observed (exempt).
	exempted map[rowID]bool
	// seen counts the objects of each kind (by namespace/name).
	seen map[string]map[string]bool
}

func newOwnershipRecorder(ours func(namespace, name string) bool, isUser func(string) bool) *ownershipRecorder {
	return &ownershipRecorder{ours: ours, isUser: isUser, problems: map[string]bool{}, observed: map[rowID]bool{}, exempted: map[rowID]bool{}, seen: map[string]map[string]bool{}}
}

// watch starts watching the metadata of every pipeline kind until the test
// ends.
func (r *ownershipRecorder) watch(t *testing.T, cfg *rest.Config) {
	t.Helper()
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for kind, gvr := range pipelineResources {
		w, err := mc.Resource(gvr).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("failed to watch %s: %v", gvr.Resource, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Stop()
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error || ev.Type == watch.Bookmark {
					continue
				}
				if o, ok := ev.Object.(*metav1.PartialObjectMetadata); ok {
					r.record(kind, o)
				}
			}
		}()
	}
}

// record checks one version of an object.
func (r *ownershipRecorder) record(kind string, o *metav1.PartialObjectMetadata) {
	if !r.ours(o.Namespace, o.Name) {
		return
	}
	table := pipeline.OwnershipOf(kind)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[kind] == nil {
		r.seen[kind] = map[string]bool{}
	}
	r.seen[kind][o.Namespace+"/"+o.Name] = true
	if table == nil {
		r.problems[fmt.Sprintf("no ownership table for %s", kind)] = true
		return
	}
	for _, v := range table.Violations(o.ManagedFields, r.isUser) {
		r.problems[fmt.Sprintf("%s %s: %s", kind, key(o.Namespace, o.Name), v)] = true
	}
	for _, e := range o.ManagedFields {
		if e.FieldsV1 == nil {
			continue
		}
		paths, err := pipeline.FieldPaths(e.FieldsV1.GetRawBytes())
		if err != nil {
			continue // Violations said so
		}
		for i, row := range table.Rows {
			if row.Writer != e.Manager || row.Field == "" {
				continue
			}
			for _, p := range paths {
				if under(p, pipeline.SplitFieldPath(row.Field)) {
					r.observed[rowID{table.Kind, i}] = true
					break
				}
			}
		}
	}
}

// under reports whether path is row or below it.
func under(path, row []string) bool {
	if len(path) < len(row) {
		return false
	}
	for i := range row {
		if row[i] != "*" && row[i] != path[i] {
			return false
		}
	}
	return true
}

func key(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// wrap is a rest.Config WrapTransport that records the hub's patches of
// finalizers and its deletions of pipeline objects.
func (r *ownershipRecorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodPatch || req.Method == http.MethodPut || req.Method == http.MethodDelete {
			r.request(req)
		}
		return rt.RoundTrip(req)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// request records one PATCH or DELETE of the hub.
func (r *ownershipRecorder) request(req *http.Request) {
	kind, namespace, name, ok := pipelineObjectOf(req.URL.Path)
	if !ok || !r.ours(namespace, name) {
		return
	}
	table := pipeline.OwnershipOf(kind)
	if table == nil {
		return
	}
	manager := req.URL.Query().Get("fieldManager")
	var body []byte
	if req.Method != http.MethodDelete && req.Body != nil && req.GetBody != nil {
		rc, err := req.GetBody()
		if err == nil {
			body, _ = io.ReadAll(rc)
			_ = rc.Close()
		}
	}
	var deleter string
	if req.Method == http.MethodDelete {
		deleter = callerWriter()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch req.Method {
	case http.MethodPut:
		// An update writes the whole object (or status): its writer writes
		// every field in it, though managedFields give it only those it changed.
		var obj map[string]any
		if json.Unmarshal(body, &obj) != nil {
			return
		}
		paths := objectPaths(nil, obj)
		for i, row := range table.Rows {
			if row.Writer != manager || row.Field == "" {
				continue
			}
			for _, p := range paths {
				if under(p, pipeline.SplitFieldPath(row.Field)) {
					r.observed[rowID{table.Kind, i}] = true
					break
				}
			}
		}
	case http.MethodPatch:
		if !bytes.Contains(body, []byte(`"finalizers"`)) {
			return
		}
		for i, row := range table.Rows {
			if row.Writer == manager && strings.HasPrefix(row.Field, "metadata.finalizers") {
				r.observed[rowID{table.Kind, i}] = true
			}
		}
	case http.MethodDelete:
		found := false
		for i, row := range table.Rows {
			if row.Writer == deleter && row.How == pipeline.HowDelete {
				r.observed[rowID{table.Kind, i}] = true
				found = true
			}
		}
		if !found {
			r.problems[fmt.Sprintf("%s %s: deleted by %q, which no row lets delete it", kind, key(namespace, name), deleter)] = true
		}
	}
}

// objectPaths lists the paths of the leaves of a decoded object, the items
// of a list of conditions named by their type, as FieldPaths does.
func objectPaths(prefix []string, v any) [][]string {
	var out [][]string
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			out = append(out, objectPaths(append(append([]string(nil), prefix...), k), child)...)
		}
	case []any:
		if len(prefix) > 0 && prefix[len(prefix)-1] == "conditions" {
			for _, item := range v {
				if c, ok := item.(map[string]any); ok {
					out = append(out, objectPaths(append(append([]string(nil), prefix...), fmt.Sprint(c["type"])), c)...)
				}
			}
			break
		}
		out = append(out, prefix)
	default:
		out = append(out, prefix)
	}
	return out
}

// observe records a row as exercised whose write leaves no trace the
// recorder can see (a writer clearing a field owns nothing afterwards): the
// test asserts the effect instead.
func (r *ownershipRecorder) observe(t *testing.T, kind, field, writer string) {
	t.Helper()
	table := pipeline.OwnershipOf(kind)
	for i, row := range table.Rows {
		if row.Field == field && row.Writer == writer {
			r.mu.Lock()
			r.observed[rowID{table.Kind, i}] = true
			r.mu.Unlock()
			return
		}
	}
	t.Fatalf("the ownership table of %s has no row of %s by %s", kind, field, writer)
}

// exempt lets a row go unexercised: only for a write the hub makes in a race
// the test cannot bring about on purpose (the caller says which).
func (r *ownershipRecorder) exempt(kind, field, writer string) {
	table := pipeline.OwnershipOf(kind)
	for i, row := range table.Rows {
		if row.Field == field && row.Writer == writer {
			r.mu.Lock()
			r.exempted[rowID{table.Kind, i}] = true
			r.mu.Unlock()
			return
		}
	}
	r.mu.Lock()
	r.problems[fmt.Sprintf("exempted row %s %s by %s is not in the table", kind, field, writer)] = true
	r.mu.Unlock()
}

// callerWriter returns the field manager of the hub package on the calling
// goroutine's stack (the innermost one, hub/pipeline's helpers skipped), or
// the innermost function outside the libraries.
func callerWriter() string {
	pcs := make([]uintptr, 256)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	const module = "github.com/flotilla-io/flotilla/"
	for {
		f, more := frames.Next()
		if rest, ok := strings.CutPrefix(f.Function, module); ok && !strings.HasPrefix(rest, "hub/pipeline.") && !strings.HasPrefix(rest, "hub/app.") {
			for pkg, manager := range writerPackages {
				if strings.HasPrefix(rest, pkg+".") {
					return manager
				}
			}
			return rest
		}
		if !more {
			return "unknown"
		}
	}
}

// pipelineObjectOf parses an API path of one object of a pipeline kind.
func pipelineObjectOf(path string) (kind, namespace, name string, ok bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	// apis/<group>/<version>[/namespaces/<ns>]/<resource>/<name>[/status]
	if len(parts) < 5 || parts[0] != "apis" {
		return "", "", "", false
	}
	rest := parts[3:]
	if rest[0] == "namespaces" && len(rest) >= 4 {
		namespace, rest = rest[1], rest[2:]
	}
	if len(rest) < 2 {
		return "", "", "", false
	}
	for k, gvr := range pipelineResources {
		if gvr.Group == parts[1] && gvr.Resource == rest[0] {
			return k, namespace, rest[1], true
		}
	}
	return "", "", "", false
}

// report returns the problems seen, and a line for every hub row of the
// ownership table no write of the run exercised.
func (r *ownershipRecorder) report() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for p := range r.problems {
		out = append(out, p)
	}
	sort.Strings(out)
	for _, k := range pipeline.Ownership {
		for i, row := range k.Rows {
			if id := (rowID{k.Kind, i}); row.Writer == pipeline.WriterUser || r.observed[id] || r.exempted[id] {
				continue
			}
			field := row.Field
			if row.How == pipeline.HowDelete {
				field = "(delete)"
			}
			out = append(out, fmt.Sprintf("never exercised: %s %s by %s (%s)", k.Kind, field, row.Writer, row.How))
		}
	}
	for kind := range pipelineResources {
		if len(r.seen[kind]) == 0 {
			out = append(out, fmt.Sprintf("no %s was checked", kind))
		}
	}
	return out
}
