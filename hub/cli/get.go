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
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/apiproxy"
)

// getConcurrency is how many members `get` asks at once.
const getConcurrency = 10

// getOptions are the flags of `get`.
type getOptions struct {
	allNamespaces bool
	clusters      string
	output        string
	// memberTimeout bounds the questions to one member. Default: 10s.
	memberTimeout time.Duration
}

func newGetCommand(cfg *Config) *cobra.Command {
	o := getOptions{memberTimeout: 10 * time.Second}
	cmd := &cobra.Command{
		Use:   "get <resource> [-n NAMESPACE | -A] [--clusters SELECTOR] [-o wide|yaml|json]",
		Short: "List a resource on every member cluster at once, through the hub (API proxy)",
		Long: `List a resource (pods, deployments, configmaps, a custom resource; any name kubectl
accepts, short names included) on the selected member clusters at once, through the
hub's API proxy with your hub credentials, and print one table whose first column is
CLUSTER. Members are asked concurrently, each within --member-timeout; a member that
fails (unreachable, no such resource, forbidden) is listed with its error and the
others are printed. The command fails only when every member failed.

On each member you are User flotilla:hub:<you> (the agent's --proxy-identity-prefix),
with what its RBAC grants; on the hub you need get on memberclusters/proxy of
proxy.flotilla.io for each member (docs/how-to/reach-members.md).

  kubectl flotilla get pods -A
  kubectl flotilla get deployments -n web --clusters env=prod -o wide

-o yaml and -o json print {"clusters": [{"cluster": ..., "items": [...]}, ...]}, a
member that failed with "error" instead of "items".`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGet(cmd.Context(), cfg, args[0], o)
		},
	}
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "List the resource in every namespace.")
	cmd.Flags().StringVar(&o.clusters, "clusters", "", "Only the member clusters with these labels (a label selector, e.g. env=prod). Default: every member.")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "Output format: wide, yaml or json. Default: a table.")
	cmd.Flags().DurationVar(&o.memberTimeout, "member-timeout", o.memberTimeout, "Longest the questions to one member may take.")
	return cmd
}

// memberList is what one member answered.
type memberList struct {
	Cluster string `json:"cluster"`
	// Table is the server-side table (output table or wide).
	Table *metav1.Table `json:"-"`
	// Items are the objects (output yaml or json).
	Items []map[string]any `json:"items,omitempty"`
	Error string           `json:"error,omitempty"`
}

func runGet(ctx context.Context, cfg *Config, resource string, o getOptions) error {
	switch o.output {
	case "", "wide", "yaml", "json":
	default:
		return fmt.Errorf("--output must be wide, yaml or json, got %q", o.output)
	}
	if o.memberTimeout <= 0 {
		return fmt.Errorf("--member-timeout must be positive, got %s", o.memberTimeout)
	}
	sel, err := labels.Parse(o.clusters)
	if err != nil {
		return fmt.Errorf("invalid --clusters %q: %w", o.clusters, err)
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(cfg.loading, cfg.overrides)
	namespace, _, err := loader.Namespace()
	if err != nil {
		return fmt.Errorf("failed to read the namespace of the kubeconfig: %w", err)
	}
	if o.allNamespaces {
		namespace = ""
	}
	hub, err := cfg.Client()
	if err != nil {
		return err
	}
	members := &clusterv1beta1.MemberClusterList{}
	if err := hub.List(ctx, members, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return fmt.Errorf("failed to list member clusters: %w", err)
	}
	if len(members.Items) == 0 {
		if sel.Empty() {
			return errors.New("the fleet has no member clusters")
		}
		return fmt.Errorf("no member cluster has labels %s", sel)
	}
	hubConfig, err := cfg.RESTConfig()
	if err != nil {
		return err
	}
	names := make([]string, 0, len(members.Items))
	for _, m := range members.Items {
		names = append(names, m.Name)
	}
	sort.Strings(names)
	results := make([]memberList, len(names))
	limit := make(chan struct{}, getConcurrency)
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			limit <- struct{}{}
			defer func() { <-limit }()
			mctx, cancel := context.WithTimeout(ctx, o.memberTimeout)
			defer cancel()
			results[i] = getFromMember(mctx, hubConfig, name, resource, namespace, o.output)
		}()
	}
	wg.Wait()
	failed := 0
	for _, r := range results {
		if r.Error != "" {
			failed++
		}
	}
	if err := printMemberLists(cfg.Out, results, o.output, o.allNamespaces); err != nil {
		return err
	}
	if failed == len(results) {
		return fmt.Errorf("every member cluster failed (%d)", failed)
	}
	return nil
}

// getFromMember lists resource on member through the hub's API proxy.
func getFromMember(ctx context.Context, hub *rest.Config, member, resource, namespace, output string) memberList {
	out := memberList{Cluster: member}
	fail := func(err error) memberList {
		out.Error = oneLine(err)
		return out
	}
	cfg := rest.CopyConfig(hub)
	cfg.Host = strings.TrimSuffix(hub.Host, "/") + apiproxy.PathPrefix(member)
	cfg.APIPath = ""
	cfg.Timeout = 0
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fail(err)
	}
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)), dc, nil)
	gvr, err := mapper.ResourceFor(schema.ParseGroupResource(resource).WithVersion(""))
	if err != nil {
		return fail(fmt.Errorf("the member does not serve %q: %w", resource, err))
	}
	mapping, err := mapper.RESTMapping(schema.GroupKind{Group: gvr.Group, Kind: mustKind(mapper, gvr)}, gvr.Version)
	if err != nil {
		return fail(err)
	}
	cfg.GroupVersion = &schema.GroupVersion{Group: gvr.Group, Version: gvr.Version}
	cfg.APIPath = "/apis"
	if gvr.Group == "" {
		cfg.APIPath = "/api"
	}
	cfg.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return fail(err)
	}
	req := rc.Get().Resource(gvr.Resource).Param("limit", "500")
	if mapping.Scope.Name() == "namespace" && namespace != "" {
		req = req.Namespace(namespace)
	}
	if output == "yaml" || output == "json" {
		body, err := req.Do(ctx).Raw()
		if err != nil {
			return fail(err)
		}
		list := &unstructured.UnstructuredList{}
		if err := list.UnmarshalJSON(body); err != nil {
			return fail(err)
		}
		out.Items = []map[string]any{}
		for _, item := range list.Items {
			out.Items = append(out.Items, item.Object)
		}
		return out
	}
	body, err := req.Param("includeObject", "Metadata").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json").
		Do(ctx).Raw()
	if err != nil {
		return fail(err)
	}
	table := &metav1.Table{}
	if err := json.Unmarshal(body, table); err != nil {
		return fail(fmt.Errorf("the member did not answer with a table: %w", err))
	}
	out.Table = table
	return out
}

// mustKind returns the kind of gvr, or "" (RESTMapping then fails and says why).
func mustKind(mapper interface {
	KindFor(schema.GroupVersionResource) (schema.GroupVersionKind, error)
}, gvr schema.GroupVersionResource) string {
	gvk, err := mapper.KindFor(gvr)
	if err != nil {
		return ""
	}
	return gvk.Kind
}

// oneLine is err's text on one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// printMemberLists writes the members' answers: one table with CLUSTER first
// (and NAMESPACE, with -A), or a document of every member's items.
func printMemberLists(w io.Writer, results []memberList, output string, allNamespaces bool) error {
	switch output {
	case "json", "yaml":
		doc := map[string]any{"clusters": results}
		var b []byte
		var err error
		if output == "json" {
			b, err = json.MarshalIndent(doc, "", "  ")
			b = append(b, '\n')
		} else {
			b, err = yaml.Marshal(doc)
		}
		if err != nil {
			return fmt.Errorf("failed to encode the output: %w", err)
		}
		_, err = w.Write(b)
		return err
	}
	wide := output == "wide"
	// The columns are those of the first member that answered, more of any
	// other member's (another version) after them.
	var columns []string
	seen := map[string]bool{}
	for _, r := range results {
		if r.Table == nil {
			continue
		}
		for _, c := range r.Table.ColumnDefinitions {
			if (c.Priority == 0 || wide) && !seen[c.Name] {
				seen[c.Name] = true
				columns = append(columns, c.Name)
			}
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	header := []string{"CLUSTER"}
	if allNamespaces {
		header = append(header, "NAMESPACE")
	}
	for _, c := range columns {
		header = append(header, strings.ToUpper(c))
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range results {
		if r.Error != "" {
			continue
		}
		index := map[string]int{}
		for i, c := range r.Table.ColumnDefinitions {
			index[c.Name] = i
		}
		for _, row := range r.Table.Rows {
			line := []string{r.Cluster}
			if allNamespaces {
				line = append(line, rowNamespace(row))
			}
			for _, c := range columns {
				cell := ""
				if i, ok := index[c]; ok && i < len(row.Cells) {
					cell = formatCell(row.Cells[i])
				}
				line = append(line, cell)
			}
			fmt.Fprintln(tw, strings.Join(line, "\t"))
		}
	}
	// The members that failed come last, so that the rows above stay aligned.
	for _, r := range results {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\terror: %s\n", r.Cluster, r.Error)
		}
	}
	return tw.Flush()
}

// rowNamespace is the namespace of a table row's object (its metadata comes
// with the row: includeObject=Metadata).
func rowNamespace(row metav1.TableRow) string {
	var meta metav1.PartialObjectMetadata
	if len(row.Object.Raw) == 0 || json.Unmarshal(row.Object.Raw, &meta) != nil {
		return ""
	}
	return meta.Namespace
}

func formatCell(v any) string {
	switch c := v.(type) {
	case nil:
		return "<none>"
	case string:
		if c == "" {
			return "<none>"
		}
		return c
	case float64:
		return fmt.Sprint(int64(c))
	default:
		return fmt.Sprint(c)
	}
}
