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

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
)

func TestValidationsDescribeEveryBoundTheAPIServerEnforces(t *testing.T) {
	for _, tc := range []struct {
		name   string
		schema apiextensionsv1.JSONSchemaProps
		want   string
	}{
		{"no bounds say nothing", apiextensionsv1.JSONSchemaProps{Type: "string"}, ""},
		{"an enum lists its values", apiextensionsv1.JSONSchemaProps{Enum: []apiextensionsv1.JSON{{Raw: []byte(`"PickAll"`)}, {Raw: []byte(`"PickN"`)}}}, "one of `PickAll`, `PickN`"},
		{"numbers show their range and default", apiextensionsv1.JSONSchemaProps{Minimum: ptr.To(1.0), Maximum: ptr.To(100.0), Default: &apiextensionsv1.JSON{Raw: []byte("10")}}, "default `10`; ≥ 1; ≤ 100"},
		{"lengths and patterns", apiextensionsv1.JSONSchemaProps{MaxLength: ptr.To[int64](63), Pattern: "^[a-z]+$"}, "at most 63 characters; matches `^[a-z]+$`"},
		{"CEL rules come with their message", apiextensionsv1.JSONSchemaProps{XValidations: apiextensionsv1.ValidationRules{{Rule: "self.a\n  != self.b", Message: "a and b differ"}}}, "rule `self.a != self.b` (a and b differ)"},
		{"map lists name their keys", apiextensionsv1.JSONSchemaProps{XListType: ptr.To("map"), XListMapKeys: []string{"type"}}, "list type map keyed by `type`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, validations(&tc.schema)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestScanMetricsFindsCollectorsByNameTypeAndLabels(t *testing.T) {
	root := t.TempDir()
	src := `package x

import "github.com/prometheus/client_golang/prometheus"

const prefix = "flotilla_x_"

var (
	a = prometheus.NewCounterVec(prometheus.CounterOpts{Name: prefix + "things_total", Help: "Things, by kind."}, []string{"kind"})
	b = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "flotilla", Name: "level", Help: "A level."})
)
`
	if err := os.MkdirAll(filepath.Join(root, "hub", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "hub", "x", "m.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := scanMetrics(root, "hub", "hub")
	if err != nil {
		t.Fatal(err)
	}
	want := []metric{
		{name: "flotilla_x_things_total", kind: "counter", help: "Things, by kind.", binary: "hub", where: "hub/x/m.go:8", labels: []string{"kind"}},
		{name: "flotilla_level", kind: "gauge", help: "A level.", binary: "hub", where: "hub/x/m.go:9"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(metric{})); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestTheGeneratedPagesNameEveryBinaryKindAndMetric(t *testing.T) {
	out := output{}
	if err := genCLI(out); err != nil {
		t.Fatal(err)
	}
	if err := genAPI("../..", out); err != nil {
		t.Fatal(err)
	}
	if err := genMetrics("../..", out); err != nil {
		t.Fatal(err)
	}
	for page, needle := range map[string]string{
		"docs/reference/cli/hub.md":                      "`--tunnel-advertise-address string`",
		"docs/reference/cli/agent.md":                    "## agent join",
		"docs/reference/cli/kubectl-flotilla.md":         "## kubectl flotilla why",
		"docs/reference/api/clusterresourceplacement.md": "`spec.policy.placementType`",
		"docs/reference/api/well-known.md":               "`cluster.flotilla.io/name`",
		"docs/reference/metrics.md":                      "`flotilla_tunnel_sessions`",
	} {
		if !strings.Contains(string(out[page]), needle) {
			t.Errorf("%s does not contain %s", page, needle)
		}
	}
	if host, _ := os.Hostname(); host != "" {
		for page, b := range out {
			if strings.Contains(string(b), "`"+host+"`") {
				t.Errorf("%s names this machine (%s): a default came from the environment", page, host)
			}
		}
	}
}
