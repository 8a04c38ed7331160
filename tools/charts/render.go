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

package charts

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// The charts, relative to the repository's root, and the release each one is
// rendered as.
const (
	HubChart   = "charts/flotilla-hub"
	AgentChart = "charts/flotilla-agent"
	// Namespace is where both charts are installed: the hub's default
	// namespace, and the one `agent join` stores the agent's identity in.
	Namespace = "flotilla-system"
)

// Release is what `helm template` renders.
type Release struct {
	// Helm is the helm binary.
	Helm string
	// Chart is the chart's folder.
	Chart string
	// Name is the release name. Default: the chart folder's name.
	Name string
	// Namespace is the release namespace. Default: Namespace.
	Namespace string
	// ValuesFiles are passed as --values, in order.
	ValuesFiles []string
	// Set are passed as --set, in order (key=value).
	Set []string
	// SetJSON are passed as --set-json, in order (key=<json>).
	SetJSON []string
}

// Template runs `helm template` (with the chart's CRDs) and returns the objects
// it renders, in its order.
func Template(ctx context.Context, r Release) ([]*unstructured.Unstructured, error) {
	if r.Name == "" {
		r.Name = filepath.Base(r.Chart)
	}
	if r.Namespace == "" {
		r.Namespace = Namespace
	}
	args := []string{"template", r.Name, r.Chart, "--namespace", r.Namespace, "--include-crds"}
	for _, f := range r.ValuesFiles {
		args = append(args, "--values", f)
	}
	for _, s := range r.Set {
		args = append(args, "--set", s)
	}
	for _, s := range r.SetJSON {
		args = append(args, "--set-json", s)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, r.Helm, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("helm %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return Parse(stdout.Bytes())
}

// Parse reads a stream of YAML documents into objects, skipping empty ones.
// Every object goes through JSON as Kubernetes reads it (whole numbers are
// int64), so that numbers compare alike whatever produced them.
func Parse(data []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("failed to split the YAML documents: %w", err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("failed to parse a YAML document: %w", err)
		}
		var m map[string]any
		if err := utiljson.Unmarshal(js, &m); err != nil {
			return nil, fmt.Errorf("failed to parse a YAML document: %w", err)
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
}

// canonical passes objects through JSON (see Parse).
func canonical(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		js, err := json.Marshal(o.Object)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := utiljson.Unmarshal(js, &m); err != nil {
			return nil, err
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out, nil
}
