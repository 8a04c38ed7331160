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

package analysis

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// A prometheus check runs its query as an instant query at the round's time,
// turns the result into the successCondition's input (resultInput) and
// evaluates the condition. Everything that keeps it from a true or false answer
// fails the round, with the reason in the round's message, rather than leaving
// it unknown: no Prometheus configured (the message names --prometheus-url), a
// query error, a Prometheus that cannot be reached or does not answer within
// the timeout, more than maxPrometheusSeries series, a range vector or string
// result, a condition that cannot be evaluated. A Prometheus that is down for
// a round thus counts against failureLimit: set failureLimit above 1 to ride
// out a short outage.

// Bounds of the prometheus checks.
const (
	// maxPrometheusSeries is the most series a query's result may hold; a query
	// that returns more fails its round (aggregate it, e.g. with max by (cluster)).
	maxPrometheusSeries = 1000
	// DefaultPrometheusTimeout bounds one query: the hub's request and the
	// evaluation on the Prometheus server.
	DefaultPrometheusTimeout = 10 * time.Second
	// maxSeriesInMessage is how many series a failure message shows.
	maxSeriesInMessage = 5
)

// Prometheus runs PromQL instant queries. promv1.API is one; so is what
// NewPrometheus returns.
type Prometheus interface {
	Query(ctx context.Context, query string, ts time.Time, opts ...promv1.Option) (model.Value, promv1.Warnings, promv1.Infos, error)
}

// PrometheusOptions says how the hub reaches its Prometheus.
type PrometheusOptions struct {
	// URL is the Prometheus server's base URL, e.g. http://prometheus.monitoring:9090.
	URL string
	// BearerTokenFile, if set, is a file whose content (trimmed) is sent as a
	// bearer token with every query; it is read again for each query, so a
	// rotated token is picked up.
	BearerTokenFile string
	// CAFile, if set, is a PEM file of the certificate authorities that sign the
	// Prometheus server's certificate (for https). Default: the system's.
	CAFile string
	// Timeout bounds one query. Default: DefaultPrometheusTimeout.
	Timeout time.Duration
}

// NewPrometheus returns a client of the Prometheus at o.URL. It checks the
// options (the URL's form, the CA file), not that the server answers: a
// Prometheus that is down fails the rounds that query it.
func NewPrometheus(o PrometheusOptions) (Prometheus, error) {
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http or https URL", o.URL)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("failed to read the CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the CA file %s holds no PEM certificate", o.CAFile)
		}
		transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	var rt http.RoundTripper = transport
	if o.BearerTokenFile != "" {
		if _, err := os.Stat(o.BearerTokenFile); err != nil {
			return nil, fmt.Errorf("failed to read the bearer token file: %w", err)
		}
		rt = &bearerTokenFile{file: o.BearerTokenFile, next: transport}
	}
	c, err := api.NewClient(api.Config{Address: o.URL, RoundTripper: rt})
	if err != nil {
		return nil, fmt.Errorf("failed to create a Prometheus client: %w", err)
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultPrometheusTimeout
	}
	return &timedPrometheus{api: promv1.NewAPI(c), timeout: timeout}, nil
}

// timedPrometheus bounds every query by its timeout, on both sides.
type timedPrometheus struct {
	api     promv1.API
	timeout time.Duration
}

func (p *timedPrometheus) Query(ctx context.Context, query string, ts time.Time, opts ...promv1.Option) (model.Value, promv1.Warnings, promv1.Infos, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	return p.api.Query(ctx, query, ts, append([]promv1.Option{promv1.WithTimeout(p.timeout)}, opts...)...)
}

// bearerTokenFile sends the file's content as a bearer token.
type bearerTokenFile struct {
	file string
	next http.RoundTripper
}

func (b *bearerTokenFile) RoundTrip(req *http.Request) (*http.Response, error) {
	token, err := os.ReadFile(b.file)
	if err != nil {
		return nil, fmt.Errorf("failed to read the bearer token file: %w", err)
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	return b.next.RoundTrip(req)
}

// expandClusters replaces every {{clusters}} in a query with a regular
// expression that matches exactly the cluster names (PromQL anchors label
// matchers), each name's metacharacters escaped, and the regular expression
// escaped for a double-quoted PromQL string: "a.b" and "c" become a\\.b|c.
// With no clusters it is one that matches no value, not even the empty one
// (\\b\\B: a word boundary that is not one).
func expandClusters(query string, clusters []string) string {
	if !strings.Contains(query, placementv1beta1.PrometheusClustersPlaceholder) {
		return query
	}
	names := append([]string(nil), clusters...)
	sort.Strings(names)
	quoted := make([]string, 0, len(names))
	for _, n := range names {
		quoted = append(quoted, regexp.QuoteMeta(n))
	}
	re := strings.Join(quoted, "|")
	if len(names) == 0 {
		re = `\b\B`
	}
	re = strings.ReplaceAll(re, `\`, `\\`)
	return strings.ReplaceAll(query, placementv1beta1.PrometheusClustersPlaceholder, re)
}

// resultInput turns a query's result into what a successCondition sees as
// result: a scalar is a double; an instant vector is a list of
// {metric: {label: value}, value: double}, in the order Prometheus returned
// them, empty when nothing matched. A range vector, a string, or a vector of
// more than maxPrometheusSeries series is an error that says what to change.
func resultInput(v model.Value) (any, error) {
	switch r := v.(type) {
	case *model.Scalar:
		return float64(r.Value), nil
	case model.Vector:
		if len(r) > maxPrometheusSeries {
			return nil, fmt.Errorf("the query returned %d series, over the limit of %d: aggregate it (for example max by (cluster) (...))", len(r), maxPrometheusSeries)
		}
		out := make([]any, 0, len(r))
		for _, s := range r {
			metric := make(map[string]any, len(s.Metric))
			for k, val := range s.Metric {
				metric[string(k)] = string(val)
			}
			out = append(out, map[string]any{"metric": metric, "value": float64(s.Value)})
		}
		return out, nil
	case model.Matrix:
		return nil, fmt.Errorf("the query returned a range vector; a check needs an instant vector or a scalar (wrap the range in a function such as rate or max_over_time)")
	case nil:
		return nil, fmt.Errorf("the query returned no result")
	default:
		return nil, fmt.Errorf("the query returned a %s; a check needs an instant vector or a scalar", v.Type())
	}
}

// describeResult says what a query returned, for a failure message: the
// scalar's value, or up to maxSeriesInMessage series with their values.
func describeResult(v model.Value) string {
	switch r := v.(type) {
	case *model.Scalar:
		return "result = " + formatValue(float64(r.Value))
	case model.Vector:
		if len(r) == 0 {
			return "the query returned no series"
		}
		parts := make([]string, 0, maxSeriesInMessage+1)
		for i, s := range r {
			if i == maxSeriesInMessage {
				parts = append(parts, fmt.Sprintf("%d more", len(r)-maxSeriesInMessage))
				break
			}
			parts = append(parts, s.Metric.String()+" "+formatValue(float64(s.Value)))
		}
		return "result: " + strings.Join(parts, ", ")
	default:
		return ""
	}
}

func formatValue(f float64) string {
	if math.IsNaN(f) {
		return "NaN"
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}

// runPrometheusCheck runs one prometheus check over the stage's clusters at now.
func runPrometheusCheck(ctx context.Context, prom Prometheus, c Check, clusters []string, now time.Time) CheckResult {
	fail := func(format string, args ...any) CheckResult {
		return CheckResult{Name: c.name, Message: fmt.Sprintf("check %s: ", c.name) + fmt.Sprintf(format, args...)}
	}
	if prom == nil {
		return fail("no Prometheus is configured: start the hub with --prometheus-url")
	}
	query := expandClusters(c.query, clusters)
	val, _, _, err := prom.Query(ctx, query, now)
	if err != nil {
		prometheusQueriesTotal.WithLabelValues(metricQueryError).Inc()
		return fail("the query failed: %s", OneLine(err.Error()))
	}
	in, err := resultInput(val)
	if err != nil {
		prometheusQueriesTotal.WithLabelValues(metricQueryError).Inc()
		return fail("%s", err.Error())
	}
	prometheusQueriesTotal.WithLabelValues(metricQueryOK).Inc()
	ok, err := evalCondition(ctx, c, in)
	switch {
	case err != nil:
		return fail("the successCondition could not be evaluated: %s (%s)", OneLine(err.Error()), describeResult(val))
	case !ok:
		return fail("%s is false: %s", c.condition, describeResult(val))
	}
	return CheckResult{Name: c.name, Passed: true}
}

// evalCondition evaluates a successCondition over a result.
func evalCondition(ctx context.Context, c Check, result any) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	val, _, err := c.prg.ContextEval(ctx, map[string]any{"result": result})
	if err != nil {
		return false, err
	}
	b, ok := val.Value().(bool)
	if !ok {
		return false, fmt.Errorf("it returned %v (%s), not a bool", val.Value(), val.Type().TypeName())
	}
	return b, nil
}
