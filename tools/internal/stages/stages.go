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

// Package stages reads, from a hub's metrics, where the changes of its
// placements spent their time: flotilla_placement_stage_seconds, by stage,
// between two readings. fleetsim and the latency tool report it.
package stages

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metric is the hub's histogram of the stages (hub/pipeline/spans.go).
const Metric = "flotilla_placement_stage_seconds"

// Order is the pipeline's order of the stages (hub/pipeline.Stage).
var Order = []string{"snapshot", "scheduled", "bound", "work", "applied", "available", "placement"}

// Reading is the histogram of each stage at one moment.
type Reading map[string]histogram

type histogram struct {
	count float64
	sum   float64
	// upper bounds and cumulative counts, in order.
	bounds, cumulative []float64
}

// Read scrapes the hub's metrics endpoint (host:port) for the stages.
func Read(ctx context.Context, addr string) (Reading, error) {
	return ReadHistograms(ctx, addr, Metric, "stage")
}

// ReadHistograms scrapes the hub's metrics endpoint (host:port) for the
// histogram metric, by the value of its label label (series that differ in
// other labels are added up).
func ReadHistograms(ctx context.Context, addr, metric, label string) (Reading, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("failed to read the hub's metrics: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the hub's metrics endpoint answered %s", resp.Status)
	}
	return ParseHistograms(resp.Body, metric, label)
}

// Parse reads the stages from metrics in the Prometheus text format.
func Parse(r io.Reader) (Reading, error) { return ParseHistograms(r, Metric, "stage") }

// ParseHistograms reads the histogram metric from metrics in the Prometheus
// text format, by the value of its label label; series that differ in other
// labels are added up.
func ParseHistograms(r io.Reader, metric, label string) (Reading, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("failed to parse the hub's metrics: %w", err)
	}
	out := Reading{}
	f := families[metric]
	if f == nil {
		return out, nil
	}
	for _, m := range f.GetMetric() {
		h := m.GetHistogram()
		if h == nil {
			continue
		}
		key := labelValue(m, label)
		hist, seen := out[key]
		hist.count += float64(h.GetSampleCount())
		hist.sum += h.GetSampleSum()
		for i, b := range h.GetBucket() {
			if !seen {
				hist.bounds = append(hist.bounds, b.GetUpperBound())
				hist.cumulative = append(hist.cumulative, 0)
			}
			if i < len(hist.cumulative) {
				hist.cumulative[i] += float64(b.GetCumulativeCount())
			}
		}
		out[key] = hist
	}
	return out, nil
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// Times is what one stage took between two readings.
type Times struct {
	// Name is the stage (or the label value read).
	Name string `json:"name"`
	// Count is how many times the stage was reached (once a cluster for the
	// per-cluster stages).
	Count int `json:"count"`
	// Mean, P50 and P99 are in seconds; the percentiles are interpolated
	// within the histogram's buckets, as Prometheus' histogram_quantile does.
	Mean float64 `json:"meanSeconds"`
	P50  float64 `json:"p50Seconds"`
	P99  float64 `json:"p99Seconds"`
}

// Since returns each stage's times between before and r, in pipeline order,
// leaving out the stages not reached.
func (r Reading) Since(before Reading) []Times {
	var out []Times
	names := make([]string, 0, len(r))
	for name := range r {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return rank(names[i]) < rank(names[j]) })
	for _, name := range names {
		now, was := r[name], before[name]
		d := histogram{count: now.count - was.count, sum: now.sum - was.sum, bounds: now.bounds}
		for i, c := range now.cumulative {
			if i < len(was.cumulative) {
				c -= was.cumulative[i]
			}
			d.cumulative = append(d.cumulative, c)
		}
		if d.count < 1 {
			continue
		}
		out = append(out, Times{Name: name, Count: int(d.count), Mean: round(d.sum / d.count),
			P50: round(d.quantile(0.5)), P99: round(d.quantile(0.99))})
	}
	return out
}

// rank is a stage's place in Order; unknown stages go last.
func rank(stage string) int {
	for i, s := range Order {
		if s == stage {
			return i
		}
	}
	return len(Order)
}

// quantile interpolates the q-quantile within the bucket that holds it; one in
// the +Inf bucket is the largest finite bound.
func (h histogram) quantile(q float64) float64 {
	want := q * h.count
	lower, below := 0.0, 0.0
	for i, upper := range h.bounds {
		c := h.cumulative[i]
		if c >= want {
			if math.IsInf(upper, 1) {
				return lower
			}
			if c == below {
				return upper
			}
			return lower + (upper-lower)*(want-below)/(c-below)
		}
		lower, below = upper, c
	}
	return lower
}

func round(v float64) float64 { return math.Round(v*10000) / 10000 }
