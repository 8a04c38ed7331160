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

package plan

import (
	"bytes"
	"encoding/json"
	"fmt"

	planv1beta1 "github.com/flotilla-io/flotilla/apis/plan/v1beta1"
)

// CompareWithMember compares a planned object with the one a member holds
// (both JSON), in the fields the plan sets: the member's object is cut down
// to the planned one's shape (Project) first, so that what the member's API
// server and controllers add (status, uid, defaults, the agent's
// annotations) does not count. It returns Same, or Differs with a diff from
// the member's values to the planned ones.
func CompareWithMember(planned, live []byte) (planv1beta1.MemberState, string, error) {
	var p, l any
	if err := decode(planned, &p); err != nil {
		return "", "", fmt.Errorf("failed to read the planned object: %w", err)
	}
	if err := decode(live, &l); err != nil {
		return "", "", fmt.Errorf("failed to read the member's object: %w", err)
	}
	cut, err := json.Marshal(Project(l, p))
	if err != nil {
		return "", "", err
	}
	d, err := diff(cut, planned)
	if err != nil {
		return "", "", err
	}
	if d == "" {
		return planv1beta1.MemberSame, "", nil
	}
	return planv1beta1.MemberDiffers, d, nil
}

// Project keeps of live what shape has: of a map, the keys shape has (each
// projected in turn); of a list whose items are maps, as many items as shape
// has, each projected on the item at the same index; anything else as it
// is. A key shape has that live lacks stays absent.
func Project(live, shape any) any {
	switch s := shape.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return live
		}
		out := map[string]any{}
		for k, sv := range s {
			if lv, ok := l[k]; ok {
				out[k] = Project(lv, sv)
			}
		}
		return out
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(s) {
			return live
		}
		out := make([]any, len(l))
		for i := range l {
			out[i] = Project(l[i], s[i])
		}
		return out
	}
	return live
}

func decode(raw []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}
