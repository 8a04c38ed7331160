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

package apply

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func TestFeedbackRuleVersionSelectsTheObjectsItReads(t *testing.T) {
	rule := func(version string) placementv1beta1.StatusFeedbackRule {
		return placementv1beta1.StatusFeedbackRule{Group: "autoscaling", Version: version, Kind: "HorizontalPodAutoscaler",
			JSONPaths: []placementv1beta1.JSONPathRule{{Name: "current", Path: ".status.currentReplicas"}}}
	}
	hpa := func(version string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "autoscaling/" + version, "kind": "HorizontalPodAutoscaler",
			"status": map[string]any{"currentReplicas": int64(3)},
		}}
	}
	three := []placementv1beta1.FeedbackValue{{Name: "current", Value: "3"}}
	for _, tc := range []struct {
		name    string
		rule    string
		applied string
		want    []placementv1beta1.FeedbackValue
	}{
		{"a rule of the object's version reads it", "v2", "v2", three},
		{"a rule without a version reads every version", "", "v1", three},
		{"a rule of another version does not read it", "v2", "v1", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := parseFeedback([]placementv1beta1.StatusFeedbackRule{rule(tc.rule)}).values(hpa(tc.applied))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}
