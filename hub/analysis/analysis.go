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
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Bounds of the CEL checks.
const (
	// checkCostLimit bounds the work one evaluation of a check may do (CEL's
	// estimated cost units): a stage of hundreds of clusters, each with its 100
	// feedback resources of 20 values, stays well inside it.
	checkCostLimit = 10_000_000
	// checkTimeout bounds the time one evaluation of a check may take.
	checkTimeout = time.Second
	// MaxFailureMessage bounds status.analysis.lastFailure, as the API does.
	MaxFailureMessage = 1024
)

// Phase is the verdict on an analysis after a round.
type Phase int

const (
	// Running: more rounds are needed.
	Running Phase = iota
	// Passed: successCount rounds in a row passed.
	Passed
	// Failed: failureLimit rounds failed.
	Failed
)

func (p Phase) String() string {
	switch p {
	case Passed:
		return "Passed"
	case Failed:
		return "Failed"
	default:
		return "Running"
	}
}

// CheckResult is the outcome of one check in one round.
type CheckResult struct {
	// Name is the check's name.
	Name string
	// Passed: the check was true.
	Passed bool
	// Message says, for a check that did not pass, why: which clusters, with
	// which values, or the evaluation error.
	Message string
}

// JudgeRound adds a round's results to the analysis's counts and returns the
// new counts and the verdict. The rules:
//   - a round passes when every check passed (a round of no checks passes);
//   - a passing round adds one to consecutiveSuccesses; a failing one adds one to
//     failures, resets consecutiveSuccesses and records its failing checks'
//     messages as lastFailure (cut to 1 KiB);
//   - failures reaching failureLimit fails the analysis, and this comes first:
//     a failing round never passes it;
//   - else consecutiveSuccesses reaching successCount passes it;
//   - else it is still running.
//
// Limits below 1 count as 1. A pure function: now is the round's time.
func JudgeRound(spec *placementv1beta1.Analysis, before placementv1beta1.AnalysisStatus, round []CheckResult, now metav1.Time) (placementv1beta1.AnalysisStatus, Phase) {
	st := before
	st.Rounds++
	st.LastRoundTime = now.DeepCopy()
	var failing []string
	for _, r := range round {
		if !r.Passed {
			failing = append(failing, r.Message)
		}
	}
	if len(failing) == 0 {
		st.ConsecutiveSuccesses++
	} else {
		st.Failures++
		st.ConsecutiveSuccesses = 0
		st.LastFailure = Truncate(strings.Join(failing, "; "), MaxFailureMessage)
	}
	switch {
	case st.Failures >= AtLeastOne(spec.FailureLimit):
		return st, Failed
	case st.ConsecutiveSuccesses >= AtLeastOne(spec.SuccessCount):
		return st, Passed
	default:
		return st, Running
	}
}

// NextRoundIn is how long until the next round of an analysis whose last round
// ran at last (nil: none yet, so now), every interval.
func NextRoundIn(last *metav1.Time, interval time.Duration, now time.Time) time.Duration {
	if last == nil {
		return 0
	}
	if d := last.Add(interval).Sub(now); d > 0 {
		return d
	}
	return 0
}

// AtLeastOne is n, or 1 when n is below 1 (how successCount and failureLimit
// are read).
func AtLeastOne(n int32) int32 {
	if n < 1 {
		return 1
	}
	return n
}

// Truncate cuts s to at most n bytes, at a rune boundary, marking the cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const more = " …"
	cut := n - len(more)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + more
}

// checkEnv is the environment checks compile in: one variable, clusters, a list
// of maps (see clusterValue).
var checkEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(cel.Variable("clusters", cel.ListType(cel.MapType(cel.StringType, cel.DynType))))
})

// resultEnv is the environment successConditions compile in: one variable,
// result (see resultInput).
var resultEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(cel.Variable("result", cel.DynType))
})

// Check is one check, ready to evaluate.
type Check struct {
	name string
	// prg is the cel expression, or the prometheus check's successCondition.
	prg cel.Program
	// promql says the check is a prometheus check, with query and condition.
	promql           bool
	query, condition string
}

// Compile compiles an analysis's checks. The error, for a check that does
// not compile or does not return a bool, is written for the user: it names the
// check and says what the compiler says, on one line.
func Compile(checks []placementv1beta1.AnalysisCheck) ([]Check, error) {
	out := make([]Check, 0, len(checks))
	for _, c := range checks {
		switch {
		case c.CEL != "" && c.Prometheus != nil:
			return nil, fmt.Errorf("check %s has both a cel expression and a prometheus query; it needs exactly one", c.Name)
		case c.Prometheus != nil:
			p := c.Prometheus
			switch {
			case p.Query == "":
				return nil, fmt.Errorf("check %s has no prometheus query", c.Name)
			case len(p.Query) > placementv1beta1.MaxPrometheusQueryLength:
				return nil, fmt.Errorf("check %s: the prometheus query is %d bytes long, over the limit of %d", c.Name, len(p.Query), placementv1beta1.MaxPrometheusQueryLength)
			case p.SuccessCondition == "":
				return nil, fmt.Errorf("check %s has no successCondition", c.Name)
			case len(p.SuccessCondition) > placementv1beta1.MaxPrometheusConditionLength:
				return nil, fmt.Errorf("check %s: the successCondition is %d bytes long, over the limit of %d", c.Name, len(p.SuccessCondition), placementv1beta1.MaxPrometheusConditionLength)
			}
			prg, err := compileBool(resultEnv, c.Name, "successCondition", p.SuccessCondition)
			if err != nil {
				return nil, err
			}
			out = append(out, Check{name: c.Name, prg: prg, promql: true, query: p.Query, condition: p.SuccessCondition})
		case c.CEL == "":
			return nil, fmt.Errorf("check %s has no cel expression", c.Name)
		case len(c.CEL) > placementv1beta1.MaxAnalysisCheckExpressionLength:
			return nil, fmt.Errorf("check %s: the cel expression is %d bytes long, over the limit of %d", c.Name, len(c.CEL), placementv1beta1.MaxAnalysisCheckExpressionLength)
		default:
			prg, err := compileBool(checkEnv, c.Name, "cel expression", c.CEL)
			if err != nil {
				return nil, err
			}
			out = append(out, Check{name: c.Name, prg: prg})
		}
	}
	return out, nil
}

// compileBool compiles a check's expression (what names it: "cel expression",
// "successCondition") in the environment, which it must return a bool in.
func compileBool(newEnv func() (*cel.Env, error), check, what, expr string) (cel.Program, error) {
	env, err := newEnv()
	if err != nil {
		return nil, fmt.Errorf("failed to create the CEL environment: %w", err)
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, fmt.Errorf("check %s: the %s does not compile: %s", check, what, OneLine(iss.Err().Error()))
	}
	if t := ast.OutputType(); !t.IsExactType(types.BoolType) && !t.IsExactType(types.DynType) {
		return nil, fmt.Errorf("check %s: the %s returns %s, not bool", check, what, t)
	}
	prg, err := env.Program(ast, cel.CostLimit(checkCostLimit), cel.InterruptCheckFrequency(100))
	if err != nil {
		return nil, fmt.Errorf("check %s: the %s cannot be evaluated: %s", check, what, OneLine(err.Error()))
	}
	return prg, nil
}

// Cluster is what a check sees of one cluster.
type Cluster struct {
	// Status is the cluster's entry of the placement's status.placementStatuses.
	Status placementv1beta1.PerClusterPlacementStatus
	// Labels are the cluster's labels.
	Labels map[string]string
}

// listFields are the list fields of a per-cluster status, which a check sees
// empty rather than missing when there is nothing in them.
var listFields = []string{
	"applicableResourceOverrides", "applicableClusterResourceOverrides", "failedPlacements",
	"diffedPlacements", "driftedPlacements", "feedback", "conditions",
}

// clusterValue turns a cluster into the map a check sees: its per-cluster status
// under the field names of status.placementStatuses, every list field present,
// every feedback value with its name, value and error, plus labels.
func clusterValue(in Cluster) (map[string]any, error) {
	data, err := json.Marshal(in.Status)
	if err != nil {
		return nil, fmt.Errorf("failed to encode the status of cluster %s: %w", in.Status.ClusterName, err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("failed to decode the status of cluster %s: %w", in.Status.ClusterName, err)
	}
	for _, f := range []string{"clusterName", "observedResourceIndex"} {
		if _, ok := m[f]; !ok {
			m[f] = ""
		}
	}
	for _, f := range listFields {
		if _, ok := m[f]; !ok {
			m[f] = []any{}
		}
	}
	for _, rf := range m["feedback"].([]any) {
		res, ok := rf.(map[string]any)
		if !ok {
			continue
		}
		if _, ok := res["values"]; !ok {
			res["values"] = []any{}
		}
		for _, v := range res["values"].([]any) {
			if val, ok := v.(map[string]any); ok {
				for _, f := range []string{"value", "error"} {
					if _, ok := val[f]; !ok {
						val[f] = ""
					}
				}
			}
		}
	}
	labels := make(map[string]any, len(in.Labels))
	for k, v := range in.Labels {
		labels[k] = v
	}
	m["labels"] = labels
	return m, nil
}

// round is what a round's checks see.
type Round struct {
	// Clusters are the clusters being judged: a stage's clusters a run updated,
	// or a wave of a rolling update.
	Clusters []Cluster
	// Prometheus runs the prometheus checks' queries; nil when the hub has no
	// Prometheus.
	Prometheus Prometheus
	// Now is the round's time: the prometheus checks' queries are evaluated at it.
	Now time.Time
}

// Run evaluates every check once over the round's clusters. A cel check
// that is false is evaluated again over each cluster alone, so that its message
// can name the clusters it is false on, with their feedback values. A
// prometheus check runs its query (runPrometheusCheck).
func Run(ctx context.Context, checks []Check, rd Round) ([]CheckResult, error) {
	clusters := rd.Clusters
	all := make([]any, 0, len(clusters))
	for _, c := range clusters {
		v, err := clusterValue(c)
		if err != nil {
			return nil, err
		}
		all = append(all, v)
	}
	out := make([]CheckResult, 0, len(checks))
	for _, c := range checks {
		if c.promql {
			names := make([]string, 0, len(clusters))
			for _, cl := range clusters {
				names = append(names, cl.Status.ClusterName)
			}
			out = append(out, runPrometheusCheck(ctx, rd.Prometheus, c, names, rd.Now))
			continue
		}
		ok, err := evalCheck(ctx, c, all)
		switch {
		case err != nil:
			out = append(out, CheckResult{Name: c.name, Message: fmt.Sprintf("check %s could not be evaluated: %s", c.name, OneLine(err.Error()))})
		case ok:
			out = append(out, CheckResult{Name: c.name, Passed: true})
		default:
			var on []string
			for i, cl := range clusters {
				if alone, err := evalCheck(ctx, c, all[i:i+1]); err == nil && !alone {
					on = append(on, describeCluster(cl))
				}
			}
			msg := fmt.Sprintf("check %s is false over %s", c.name, plural(len(clusters), "cluster"))
			if len(on) > 0 {
				msg = fmt.Sprintf("check %s is false on %s", c.name, strings.Join(on, ", "))
			}
			out = append(out, CheckResult{Name: c.name, Message: msg})
		}
	}
	return out, nil
}

// evalCheck evaluates one check over the clusters (maps from clusterValue).
func evalCheck(ctx context.Context, c Check, clusters []any) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	val, _, err := c.prg.ContextEval(ctx, map[string]any{"clusters": clusters})
	if err != nil {
		return false, err
	}
	b, ok := val.Value().(bool)
	if !ok {
		return false, fmt.Errorf("it returned %v (%s), not a bool", val.Value(), val.Type().TypeName())
	}
	return b, nil
}

// describeCluster names a cluster and its feedback values, as
// "a-1 (Deployment app/web: replicas=5, ready=5)"; at most 5 resources.
func describeCluster(c Cluster) string {
	var parts []string
	for i, f := range c.Status.Feedback {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("%d more", len(c.Status.Feedback)-5))
			break
		}
		vals := make([]string, 0, len(f.Values))
		for _, v := range f.Values {
			if v.Error != "" {
				vals = append(vals, fmt.Sprintf("%s error %q", v.Name, v.Error))
				continue
			}
			vals = append(vals, fmt.Sprintf("%s=%s", v.Name, v.Value))
		}
		sort.Strings(vals)
		name := f.Name
		if f.Namespace != "" {
			name = f.Namespace + "/" + f.Name
		}
		parts = append(parts, fmt.Sprintf("%s %s: %s", f.Kind, name, strings.Join(vals, ", ")))
	}
	if len(parts) == 0 {
		return c.Status.ClusterName
	}
	return fmt.Sprintf("%s (%s)", c.Status.ClusterName, strings.Join(parts, "; "))
}

// Cache holds compiled checks by their owner (a run's or a placement's UID) and
// an index (the stage's, or 0), so that an analysis compiles its checks once,
// not every round. The zero value is ready to use.
type Cache struct {
	mu sync.Mutex
	m  map[checkKey][]Check
}

type checkKey struct {
	owner string
	index int
}

// maxCachedAnalyses bounds the cache: beyond it, it starts again empty.
const maxCachedAnalyses = 256

// Get returns the compiled checks of owner's analysis at index, compiling
// them the first time. Changed checks need a new owner or index (or Forget).
func (c *Cache) Get(owner string, index int, checks []placementv1beta1.AnalysisCheck) ([]Check, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := checkKey{owner, index}
	if got, ok := c.m[key]; ok {
		return got, nil
	}
	compiled, err := Compile(checks)
	if err != nil {
		return nil, err
	}
	if c.m == nil || len(c.m) >= maxCachedAnalyses {
		c.m = map[checkKey][]Check{}
	}
	c.m[key] = compiled
	return compiled, nil
}

// Forget drops an owner's compiled checks (a run finished, a placement's
// analysis changed).
func (c *Cache) Forget(owner string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if k.owner == owner {
			delete(c.m, k)
		}
	}
}

// OneLine joins a (compiler's) multi-line message into one line.
func OneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " | ")), " ")
}

// plural says "1 cluster" or "2 clusters".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
