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

package fleet

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/flotilla/tools/charts"
	"github.com/flotilla-io/flotilla/tools/toolchain"
)

// The kind smoke suite installs the hub with the chart and these values; what it
// then relies on (the built image, two replicas, the tunnel on the NodePort that
// agents are told to dial, the fleet's hub flags) is rendered.
func TestKindHubValuesRenderTheBuiltHubWithItsTunnelOnTheNodePort(t *testing.T) {
	root, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	helm, err := toolchain.Helm(root)
	if err != nil {
		t.Skipf("needs the pinned helm: %v", err)
	}
	values := filepath.Join(t.TempDir(), "hub-values.yaml")
	if err := writeKindHubValues(values, "kind-abc123", "10.89.0.2:30443", []string{"--heartbeat-misses=2"}); err != nil {
		t.Fatal(err)
	}
	objs, err := charts.Template(context.Background(), charts.Release{
		Helm: helm, Chart: filepath.Join(root, charts.HubChart), Name: HubChartRelease, Namespace: hubNamespace, ValuesFiles: []string{values},
	})
	if err != nil {
		t.Fatal(err)
	}
	var deploy appsv1.Deployment
	var svc corev1.Service
	crds := 0
	for _, o := range objs {
		switch {
		case o.GetKind() == "Deployment" && o.GetName() == "flotilla-hub":
			convert(t, o, &deploy)
		case o.GetKind() == "Service" && o.GetName() == "flotilla-hub":
			convert(t, o, &svc)
		case o.GetKind() == "CustomResourceDefinition":
			crds++
		}
	}
	if deploy.Namespace != hubNamespace || *deploy.Spec.Replicas != 2 {
		t.Errorf("hub Deployment %s/%s with %v replicas, want %s/flotilla-hub with 2", deploy.Namespace, deploy.Name, deploy.Spec.Replicas, hubNamespace)
	}
	c := deploy.Spec.Template.Spec.Containers[0]
	if c.Image != "flotilla-hub:kind-abc123" || c.ImagePullPolicy != "" {
		t.Errorf("hub image %s (pull policy %q), want flotilla-hub:kind-abc123 and the default policy (the image is loaded, not pulled)", c.Image, c.ImagePullPolicy)
	}
	wantTail := []string{"--tunnel-advertise-address=10.89.0.2:30443", "--heartbeat-misses=2"}
	if len(c.Args) < 2 || !cmp.Equal(wantTail, c.Args[len(c.Args)-2:]) {
		t.Errorf("hub args %q do not end in %q", c.Args, wantTail)
	}
	if svc.Spec.Type != corev1.ServiceTypeNodePort || svc.Spec.Ports[0].Name != "tunnel" || svc.Spec.Ports[0].NodePort != hubNodePort {
		t.Errorf("hub Service %s with ports %+v, want NodePort with tunnel on %d", svc.Spec.Type, svc.Spec.Ports, hubNodePort)
	}
	if crds == 0 {
		t.Error("the chart brings no CRDs")
	}
}

func convert(t *testing.T, o *unstructured.Unstructured, out any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, out); err != nil {
		t.Fatal(err)
	}
}
