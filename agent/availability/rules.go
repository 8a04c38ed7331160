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

package availability

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// ruleCostLimit bounds the work one evaluation of a rule may do, so that a rule
// cannot stall the agent.
const ruleCostLimit = 1_000_000

// Rules are compiled availability rules, by kind. The zero value holds none.
type Rules struct {
	byKind map[schema.GroupKind]*rule
}

// rule is one compiled rule; err is set, and prg nil, when it does not compile.
type rule struct {
	expression string
	prg        cel.Program
	err        error
}

// celEnv is the environment rules compile in: one dynamic variable, self.
var celEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(cel.Variable("self", cel.DynType))
})

// compiled caches compiled rules by expression: Works are re-evaluated on every
// change of their objects, and compiling is far dearer than evaluating.
var compiled sync.Map // string -> *rule

// CompileRules compiles the availability rules of a Work. A rule that does not
// compile is kept with its error; objects of its kind are then reported
// Available=False with reason AvailabilityRuleInvalid. The last rule for a kind wins.
func CompileRules(in []placementv1beta1.AvailabilityRule) Rules {
	if len(in) == 0 {
		return Rules{}
	}
	out := Rules{byKind: make(map[schema.GroupKind]*rule, len(in))}
	for _, r := range in {
		out.byKind[schema.GroupKind{Group: r.Group, Kind: r.Kind}] = compileRule(r.Expression)
	}
	return out
}

// CompileRule compiles one expression and returns the problem, if any, as the
// compiler states it.
func CompileRule(expression string) error {
	return compileRule(expression).err
}

func compileRule(expression string) *rule {
	if r, ok := compiled.Load(expression); ok {
		return r.(*rule)
	}
	r := &rule{expression: expression}
	r.prg, r.err = buildProgram(expression)
	if r.err != nil {
		r.prg = nil
	}
	compiled.Store(expression, r)
	return r
}

func buildProgram(expression string) (cel.Program, error) {
	env, err := celEnv()
	if err != nil {
		return nil, fmt.Errorf("failed to create the CEL environment: %w", err)
	}
	ast, iss := env.Compile(expression)
	if iss.Err() != nil {
		return nil, errors.New(oneLine(iss.Err().Error()))
	}
	if t := ast.OutputType(); !t.IsExactType(types.BoolType) && !t.IsExactType(types.DynType) {
		return nil, fmt.Errorf("the expression returns %s, not bool", t)
	}
	return env.Program(ast, cel.CostLimit(ruleCostLimit))
}

// Has reports whether there is a rule for the kind.
func (r Rules) Has(gk schema.GroupKind) bool {
	_, ok := r.byKind[gk]
	return ok
}

// Check returns the availability of an object on the member cluster, by the rule
// for its kind if there is one, else as the package-level Check judges it.
func (r Rules) Check(obj *unstructured.Unstructured) Result {
	if obj == nil || obj.GetDeletionTimestamp() != nil {
		return Check(obj)
	}
	ru, ok := r.byKind[obj.GroupVersionKind().GroupKind()]
	if !ok {
		return Check(obj)
	}
	if ru.err != nil {
		return Result{
			Available: metav1.ConditionFalse,
			Reason:    placementv1beta1.ReasonAvailabilityRuleInvalid,
			Message:   fmt.Sprintf("the availability rule for %s does not compile: %v", kindOf(obj), ru.err),
		}
	}
	out, _, err := ru.prg.Eval(map[string]any{"self": obj.Object})
	if err != nil {
		return notAvailable("the availability rule %q for %s failed: %v", ru.expression, kindOf(obj), err)
	}
	ok, isBool := out.Value().(bool)
	switch {
	case !isBool:
		return Result{
			Available: metav1.ConditionFalse,
			Reason:    placementv1beta1.ReasonAvailabilityRuleInvalid,
			Message:   fmt.Sprintf("the availability rule %q for %s returned %v (%s), not a bool", ru.expression, kindOf(obj), out.Value(), out.Type().TypeName()),
		}
	case ok:
		return available("the availability rule %q holds", ru.expression)
	default:
		return notAvailable("the availability rule %q does not hold yet", ru.expression)
	}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " | ")), " ")
}
