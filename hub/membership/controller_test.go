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

package membership

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
)

func TestBuiltinLabels(t *testing.T) {
	for _, tc := range []struct {
		name     string
		version  string
		provider string
		want     map[string]string
	}{
		{"a reported version gives its minor", "v1.37.1", "kwok", map[string]string{
			clusterv1beta1.LabelClusterName: "m1", clusterv1beta1.LabelKubernetesVersion: "1.37", clusterv1beta1.LabelProvider: "kwok"}},
		{"a vendor suffix is dropped", "v1.36.2-gke.1100", "gce", map[string]string{
			clusterv1beta1.LabelClusterName: "m1", clusterv1beta1.LabelKubernetesVersion: "1.36", clusterv1beta1.LabelProvider: "gce"}},
		{"nothing reported yet leaves only the name", "", "", map[string]string{
			clusterv1beta1.LabelClusterName: "m1", clusterv1beta1.LabelKubernetesVersion: "", clusterv1beta1.LabelProvider: ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"}}
			mc.Status.KubernetesVersion = tc.version
			mc.Status.Provider = tc.provider
			if diff := cmp.Diff(tc.want, BuiltinLabels(mc)); diff != "" {
				t.Errorf("BuiltinLabels (-want +got):\n%s", diff)
			}
		})
	}
}
