package scheduler

import (
	"encoding/json"
	"fmt"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// AnnotationDynamicSelectors carries Kratix-style selectors that a producer of a
// placement's resources adds at run time: a JSON list of
// {"group": "", "matchLabels": {...}, "source": "PlacementWorkflow"|"ResourceWorkflow"}.
// With an empty group they are ANDed with the placement's own label selectors (the
// placement's own win on a key conflict).
const AnnotationDynamicSelectors = "placement.flotilla.io/dynamic-selectors"

type dynamicSelectorJSON struct {
	Group       string            `json:"group,omitempty"`
	MatchLabels map[string]string `json:"matchLabels"`
	Source      string            `json:"source,omitempty"`
}

// DynamicSelectorsOf reads a placement's dynamic selectors.
func DynamicSelectorsOf(crp *placementv1beta1.ClusterResourcePlacement) ([]framework.DynamicSelector, error) {
	raw, ok := crp.Annotations[AnnotationDynamicSelectors]
	if !ok || raw == "" {
		return nil, nil
	}
	var in []dynamicSelectorJSON
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		return nil, fmt.Errorf("annotation %s is not a JSON list of {group, matchLabels, source}: %w", AnnotationDynamicSelectors, err)
	}
	out := make([]framework.DynamicSelector, 0, len(in))
	for _, s := range in {
		out = append(out, framework.DynamicSelector{Group: s.Group, MatchLabels: s.MatchLabels, Source: s.Source})
	}
	return out, nil
}
