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

package join

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
)

func TestMarkHubLabelsAndTaintsTheHubOnce(t *testing.T) {
	mc := &clusterv1beta1.MemberCluster{}
	mc.Labels = map[string]string{"env": "dev"}
	markHub(mc)
	markHub(mc)
	if diff := cmp.Diff(map[string]string{"env": "dev", clusterv1beta1.LabelHub: "true"}, mc.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	want := []clusterv1beta1.Taint{{Key: clusterv1beta1.TaintHub, Value: "true", Effect: clusterv1beta1.TaintEffectNoSchedule}}
	if diff := cmp.Diff(want, mc.Spec.Taints); diff != "" {
		t.Errorf("taints (-want +got):\n%s", diff)
	}
}

func TestAUserLabelCannotClaimTheHub(t *testing.T) {
	err := validateMember("member-1", map[string]string{clusterv1beta1.LabelHub: "true"})
	if err == nil || !strings.Contains(err.Error(), "join the hub itself with `agent join --hub-as-member`") {
		t.Errorf("validateMember(hub label) = %v, want it refused", err)
	}
	if err := validateMember("member-1", map[string]string{"env": "dev"}); err != nil {
		t.Errorf("validateMember(env=dev) = %v, want nil", err)
	}
}
