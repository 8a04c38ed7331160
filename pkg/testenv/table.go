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

package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// Table gets an object as a server-side table, the form kubectl get prints: its
// columns are the resource's print columns (all of them, including those kubectl
// shows only with -o wide). Leave namespace empty for cluster-scoped resources.
func (e *Env) Table(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*metav1.Table, error) {
	httpClient, err := rest.HTTPClientFor(e.Config)
	if err != nil {
		return nil, fmt.Errorf("failed to create an HTTP client: %w", err)
	}
	p := "/apis"
	if gvr.Group == "" {
		p = "/api"
	}
	p = path.Join(p, gvr.Group, gvr.Version)
	if namespace != "" {
		p = path.Join(p, "namespaces", namespace)
	}
	p = path.Join(p, gvr.Resource, name)
	u, err := url.JoinPath(e.Config.Host, p)
	if err != nil {
		return nil, fmt.Errorf("failed to build the URL of %s: %w", p, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("failed to build the request for %s: %w", p, err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("failed to get %s: %w", p, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", p, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("failed to get %s: %s: %s", p, resp.Status, body)
	}
	table := &metav1.Table{}
	if err := json.Unmarshal(body, table); err != nil {
		return nil, fmt.Errorf("failed to decode the table of %s: %w", p, err)
	}
	return table, nil
}

// TableColumn is a column of a table with its value in the table's first row.
type TableColumn struct {
	// Name is the column's name.
	Name string
	// Priority is 0 for the columns kubectl get shows and 1 for those only -o wide
	// shows.
	Priority int32
	// Value is the cell of the first row, formatted with %v. The cells of date
	// columns, which the server prints as ages ("5m"), are replaced by AgeValue when
	// set, so that tests can compare them.
	Value string
}

// AgeValue stands for any age in TableColumn.Value.
const AgeValue = "<age>"

// FirstRow returns the columns of table with the cells of its first row.
func FirstRow(table *metav1.Table) ([]TableColumn, error) {
	if len(table.Rows) == 0 {
		return nil, fmt.Errorf("table has no rows")
	}
	cells := table.Rows[0].Cells
	if len(cells) != len(table.ColumnDefinitions) {
		return nil, fmt.Errorf("table has %d columns but %d cells", len(table.ColumnDefinitions), len(cells))
	}
	cols := make([]TableColumn, len(cells))
	for i, def := range table.ColumnDefinitions {
		value := ""
		if cells[i] != nil {
			value = fmt.Sprintf("%v", cells[i])
		}
		if def.Type == "date" && value != "" && value != "<unknown>" {
			value = AgeValue
		}
		cols[i] = TableColumn{Name: def.Name, Priority: def.Priority, Value: value}
	}
	return cols, nil
}
