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
)

// variable matches a ${MEMBER-CLUSTER-...} reference; other ${...} text (a shell
// script in a ConfigMap, say) is left alone.
var variable = regexp.MustCompile(`\$\{MEMBER-CLUSTER-[^}]*\}`)

// substitute replaces the variables in s for cluster mc.
func substitute(s string, mc *clusterv1beta1.MemberCluster) (string, error) {
	var firstErr error
	out := variable.ReplaceAllStringFunc(s, func(v string) string {
		val, err := resolve(v, mc)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return val
	})
	return out, firstErr
}

// resolve returns the value of one variable reference.
func resolve(v string, mc *clusterv1beta1.MemberCluster) (string, error) {
	switch {
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
	return "", fmt.Errorf("unknown variable %s (known: %s, %s<key>}, %s<name>})", v, VariableClusterName, VariableLabelPrefix, VariablePropertyPrefix)
}

// substituteJSON replaces the variables in every string (keys and values) of a
// JSON value; the result is valid JSON whatever the substituted text holds.
func substituteJSON(raw []byte, mc *clusterv1beta1.MemberCluster) ([]byte, error) {
	if !variable.Match(raw) {
		return raw, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("value is not JSON: %w", err)
	}
	v, err := substituteValue(v, mc)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func substituteValue(v any, mc *clusterv1beta1.MemberCluster) (any, error) {
	switch t := v.(type) {
	case string:
		return substitute(t, mc)
	case []any:
		for i := range t {
			s, err := substituteValue(t[i], mc)
			if err != nil {
				return nil, err
			}
			t[i] = s
		}
		return t, nil
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			nk, err := substitute(k, mc)
			if err != nil {
				return nil, err
			}
			ne, err := substituteValue(e, mc)
			if err != nil {
				return nil, err
			}
			out[nk] = ne
		}
		return out, nil
	}
	return v, nil
}
