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

package overrides

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// The variables an override value may use.
const (
	// VariableClusterName is replaced by the member cluster's name.
	VariableClusterName = "${MEMBER-CLUSTER-NAME}"
	// VariableLabelPrefix, followed by a label key and "}", is replaced by the value
	// of that label of the member cluster.
	VariableLabelPrefix = "${MEMBER-CLUSTER-LABEL-KEY-"
	// VariablePropertyPrefix, followed by a property name and "}", is replaced by the
	// member cluster's value of that property (as the scheduler reads it: a
	// reported property, or a resource property such as
	// resources.flotilla.io/available-cpu).
	VariablePropertyPrefix = "${MEMBER-CLUSTER-PROPERTY-"
	// VariableHandOffPrefix, followed by the name of a spec.stateHandOff rule of
	// the placement and "}", is replaced by the value of that rule frozen on
	// the binding when the hub created it (spec.handOff): the value the
	// cluster the placement left reported last, or empty when none had.
	VariableHandOffPrefix = "${PLACEMENT-HANDOFF-"
)

// Target is what the variables of an override are resolved for: a binding's
// cluster and the hand-off values frozen on the binding.
type Target struct {
	// Cluster is the member cluster.
	Cluster *clusterv1beta1.MemberCluster
	// HandOff are the binding's spec.handOff values.
	HandOff []placementv1beta1.HandOffValue
}

// variable matches a ${MEMBER-CLUSTER-...} or ${PLACEMENT-HANDOFF-...}
// reference; other ${...} text (a shell script in a ConfigMap, say) is left
// alone.
var variable = regexp.MustCompile(`\$\{(MEMBER-CLUSTER|PLACEMENT-HANDOFF)-[^}]*\}`)

// substitute replaces the variables in s for target t.
func substitute(s string, t Target) (string, error) {
	var firstErr error
	out := variable.ReplaceAllStringFunc(s, func(v string) string {
		val, err := resolve(v, t)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return val
	})
	return out, firstErr
}

// resolve returns the value of one variable reference.
func resolve(v string, t Target) (string, error) {
	mc := t.Cluster
	switch {
	case strings.HasPrefix(v, VariableHandOffPrefix):
		name := strings.TrimSuffix(strings.TrimPrefix(v, VariableHandOffPrefix), "}")
		for _, h := range t.HandOff {
			if h.Name == name {
				return h.Value, nil
			}
		}
		return "", fmt.Errorf("variable %s: the binding to %s carries no hand-off value %q: the placement has no stateHandOff rule of that name, or the binding was created before the rule was added (values are frozen when a binding is created)", v, mc.Name, name)
	case v == VariableClusterName:
		return mc.Name, nil
	case strings.HasPrefix(v, VariableLabelPrefix):
		key := strings.TrimSuffix(strings.TrimPrefix(v, VariableLabelPrefix), "}")
		val, ok := mc.Labels[key]
		if !ok {
			return "", fmt.Errorf("variable %s: member cluster %s has no label %q", v, mc.Name, key)
		}
		return val, nil
	case strings.HasPrefix(v, VariablePropertyPrefix):
		name := strings.TrimSuffix(strings.TrimPrefix(v, VariablePropertyPrefix), "}")
		q, ok := framework.PropertyValue(mc, name)
		if !ok {
			return "", fmt.Errorf("variable %s: member cluster %s does not report property %q", v, mc.Name, name)
		}
		return q.String(), nil
	}
	return "", fmt.Errorf("unknown variable %s (known: %s, %s<key>}, %s<name>}, %s<name>})", v, VariableClusterName, VariableLabelPrefix, VariablePropertyPrefix, VariableHandOffPrefix)
}

// substituteJSON replaces the variables in every string (keys and values) of a
// JSON value; the result is valid JSON whatever the substituted text holds.
func substituteJSON(raw []byte, t Target) ([]byte, error) {
	if !variable.Match(raw) {
		return raw, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("value is not JSON: %w", err)
	}
	v, err := substituteValue(v, t)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func substituteValue(v any, target Target) (any, error) {
	switch t := v.(type) {
	case string:
		return substitute(t, target)
	case []any:
		for i := range t {
			s, err := substituteValue(t[i], target)
			if err != nil {
				return nil, err
			}
			t[i] = s
		}
		return t, nil
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			nk, err := substitute(k, target)
			if err != nil {
				return nil, err
			}
			ne, err := substituteValue(e, target)
			if err != nil {
				return nil, err
			}
			out[nk] = ne
		}
		return out, nil
	}
	return v, nil
}
