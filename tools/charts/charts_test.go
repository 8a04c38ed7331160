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

package charts

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/flotilla-io/flotilla/tools/toolchain"
)

// helm returns the pinned helm and the repository's root, or skips the test
// when helm is not built (make verify and make tools build it).
func helm(t *testing.T) (string, string) {
	t.Helper()
	root, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := toolchain.Helm(root)
	if err != nil {
		t.Skipf("the chart tests need the pinned helm: %v", err)
	}
	return bin, root
}

// render renders a chart (HubChart or AgentChart) with values.
func render(t *testing.T, chart string, r Release) []*unstructured.Unstructured {
	t.Helper()
	bin, root := helm(t)
	r.Helm, r.Chart = bin, filepath.Join(root, chart)
	for i, f := range r.ValuesFiles {
		r.ValuesFiles[i] = filepath.Join(root, f)
	}
	objs, err := Template(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// find returns the object of a kind and name, nil when it is not rendered.
func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// into converts a rendered object to its typed form.
func into[T any](t *testing.T, obj *unstructured.Unstructured, out *T) *T {
	t.Helper()
	if obj == nil {
		t.Fatalf("%T is not rendered", out)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func hubContainer(t *testing.T, objs []*unstructured.Unstructured) corev1.Container {
	t.Helper()
	d := into(t, find(objs, "Deployment", "flotilla-hub"), &appsv1.Deployment{})
	return d.Spec.Template.Spec.Containers[0]
}

func env(c corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

func TestChartsWithDefaultValuesRenderWhatTheManifestsApply(t *testing.T) {
	bin, root := helm(t)
	for _, c := range Checks(root) {
		t.Run(c.Name, func(t *testing.T) {
			c.Release.Helm = bin
			diffs, err := c.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range diffs {
				t.Error(d)
			}
		})
	}
}

func TestHubMemoryLimitReachesTheHubAsItsContainerLimit(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Release
		// wantLimit is the container's memory limit, "" for none.
		wantLimit string
		// wantFromLimit: FLOTILLA_MEMORY_LIMIT is set from limits.memory.
		wantFromLimit  bool
		wantGoMemLimit string
		wantRatioArg   string
	}{
		{name: "by default the 1Gi limit is passed on", wantLimit: "1Gi", wantFromLimit: true},
		{
			name:      "a larger limit is passed on",
			r:         Release{Set: []string{"resources.limits.memory=4Gi"}},
			wantLimit: "4Gi", wantFromLimit: true,
		},
		{
			name: "without a memory limit the hub is told none (not the node's memory)",
			r:    Release{SetJSON: []string{`resources.limits=null`}},
		},
		{
			name:      "a ratio becomes --memory-limit-ratio, and 0 is passed too",
			r:         Release{Set: []string{"memoryLimitRatio=0"}},
			wantLimit: "1Gi", wantFromLimit: true, wantRatioArg: "--memory-limit-ratio=0",
		},
		{
			name:      "goMemLimit sets GOMEMLIMIT, which wins in the hub",
			r:         Release{Set: []string{"goMemLimit=900MiB"}},
			wantLimit: "1Gi", wantFromLimit: true, wantGoMemLimit: "900MiB",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := hubContainer(t, render(t, HubChart, tc.r))
			limit := ""
			if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
				limit = q.String()
			}
			if limit != tc.wantLimit {
				t.Errorf("memory limit %q, want %q", limit, tc.wantLimit)
			}
			e := env(c, "FLOTILLA_MEMORY_LIMIT")
			fromLimit := e != nil && e.ValueFrom != nil && e.ValueFrom.ResourceFieldRef != nil &&
				e.ValueFrom.ResourceFieldRef.Resource == "limits.memory" && e.ValueFrom.ResourceFieldRef.ContainerName == ""
			if fromLimit != tc.wantFromLimit || (e != nil && !fromLimit) {
				t.Errorf("FLOTILLA_MEMORY_LIMIT %+v, want it from limits.memory: %t", e, tc.wantFromLimit)
			}
			goMemLimit := ""
			if e := env(c, "GOMEMLIMIT"); e != nil {
				goMemLimit = e.Value
			}
			if goMemLimit != tc.wantGoMemLimit {
				t.Errorf("GOMEMLIMIT %q, want %q", goMemLimit, tc.wantGoMemLimit)
			}
			ratio := ""
			for _, a := range c.Args {
				if strings.HasPrefix(a, "--memory-limit-ratio") {
					ratio = a
				}
			}
			if ratio != tc.wantRatioArg {
				t.Errorf("ratio flag %q, want %q", ratio, tc.wantRatioArg)
			}
		})
	}
}

func TestHubTunnelServiceAndAdvertiseAddress(t *testing.T) {
	for _, tc := range []struct {
		name          string
		r             Release
		wantType      corev1.ServiceType
		wantNodePort  int32
		wantAdvertise string
	}{
		{name: "by default the tunnel is a ClusterIP Service and nothing is advertised", wantType: corev1.ServiceTypeClusterIP},
		{
			name:     "a NodePort Service gets the nodePort asked for, advertised with the node's address",
			r:        Release{Set: []string{"tunnel.service.type=NodePort", "tunnel.service.nodePort=30443", "tunnel.advertiseAddress=10.89.0.2:30443"}},
			wantType: corev1.ServiceTypeNodePort, wantNodePort: 30443, wantAdvertise: "--tunnel-advertise-address=10.89.0.2:30443",
		},
		{
			name:     "a nodePort is left out of a ClusterIP Service",
			r:        Release{Set: []string{"tunnel.service.nodePort=30443"}},
			wantType: corev1.ServiceTypeClusterIP,
		},
		{
			name:     "a LoadBalancer without a nodePort gets one assigned",
			r:        Release{Set: []string{"tunnel.service.type=LoadBalancer", "tunnel.advertiseAddress=hub.example.com:8443"}},
			wantType: corev1.ServiceTypeLoadBalancer, wantAdvertise: "--tunnel-advertise-address=hub.example.com:8443",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := render(t, HubChart, tc.r)
			svc := into(t, find(objs, "Service", "flotilla-hub"), &corev1.Service{})
			if svc.Spec.Type != tc.wantType {
				t.Errorf("Service type %s, want %s", svc.Spec.Type, tc.wantType)
			}
			tunnel := svc.Spec.Ports[0]
			if tunnel.Name != "tunnel" || tunnel.NodePort != tc.wantNodePort || tunnel.TargetPort != intstr.FromString("tunnel") {
				t.Errorf("tunnel port %+v, want name tunnel, nodePort %d, targetPort tunnel", tunnel, tc.wantNodePort)
			}
			advertise := ""
			for _, a := range hubContainer(t, objs).Args {
				if strings.HasPrefix(a, "--tunnel-advertise-address") {
					advertise = a
				}
			}
			if advertise != tc.wantAdvertise {
				t.Errorf("advertise flag %q, want %q", advertise, tc.wantAdvertise)
			}
		})
	}
}

func TestHubPodDisruptionBudgetOnlyWithMoreThanOneReplica(t *testing.T) {
	for _, tc := range []struct {
		name             string
		r                Release
		wantMinAvailable *intstr.IntOrString
	}{
		{name: "two replicas by default keep one available", wantMinAvailable: ptrTo(intstr.FromInt32(1))},
		{name: "one replica has none (it would block every drain)", r: Release{Set: []string{"replicas=1"}}},
		{name: "three replicas keep minAvailable", r: Release{Set: []string{"replicas=3", "podDisruptionBudget.minAvailable=2"}}, wantMinAvailable: ptrTo(intstr.FromInt32(2))},
		{name: "a percentage is kept as a string", r: Release{Set: []string{"podDisruptionBudget.minAvailable=50%"}}, wantMinAvailable: ptrTo(intstr.FromString("50%"))},
		{name: "disabled, there is none", r: Release{Set: []string{"podDisruptionBudget.enabled=false"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pdb := find(render(t, HubChart, tc.r), "PodDisruptionBudget", "flotilla-hub")
			if tc.wantMinAvailable == nil {
				if pdb != nil {
					t.Errorf("a PodDisruptionBudget is rendered: %v", pdb.Object)
				}
				return
			}
			got := into(t, pdb, &policyv1.PodDisruptionBudget{})
			if d := cmp.Diff(tc.wantMinAvailable, got.Spec.MinAvailable); d != "" {
				t.Errorf("minAvailable (-want +got):\n%s", d)
			}
			if d := cmp.Diff(map[string]string{"app.kubernetes.io/name": "flotilla-hub"}, got.Spec.Selector.MatchLabels); d != "" {
				t.Errorf("selector (-want +got):\n%s", d)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

func TestServiceMonitorsAndNetworkPoliciesOnlyWhenEnabled(t *testing.T) {
	for _, tc := range []struct {
		name  string
		chart string
		r     Release
		want  []string // kind/name of the optional objects rendered
	}{
		{name: "the hub chart renders neither by default", chart: HubChart},
		{name: "the agent chart renders neither by default", chart: AgentChart},
		{
			name: "the hub chart renders a ServiceMonitor when asked", chart: HubChart,
			r: Release{Set: []string{"metrics.serviceMonitor.enabled=true"}}, want: []string{"ServiceMonitor/flotilla-hub"},
		},
		{
			name: "the hub chart renders a NetworkPolicy when asked", chart: HubChart,
			r: Release{Set: []string{"networkPolicy.enabled=true"}}, want: []string{"NetworkPolicy/flotilla-hub"},
		},
		{
			name: "the agent chart renders a metrics Service and a ServiceMonitor when asked", chart: AgentChart,
			r:    Release{Set: []string{"metrics.serviceMonitor.enabled=true"}},
			want: []string{"Service/flotilla-agent-metrics", "ServiceMonitor/flotilla-agent"},
		},
		{
			name: "the agent chart renders a NetworkPolicy when asked", chart: AgentChart,
			r: Release{Set: []string{"networkPolicy.enabled=true"}}, want: []string{"NetworkPolicy/flotilla-agent"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, o := range render(t, tc.chart, tc.r) {
				switch o.GetKind() {
				case "ServiceMonitor", "NetworkPolicy":
					got = append(got, o.GetKind()+"/"+o.GetName())
				case "Service":
					if o.GetName() != "flotilla-hub" {
						got = append(got, o.GetKind()+"/"+o.GetName())
					}
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("optional objects (-want +got):\n%s", d)
			}
		})
	}
}

func TestFullValuesReachThePods(t *testing.T) {
	hub := render(t, HubChart, Release{ValuesFiles: []string{HubChart + "/ci/full-values.yaml"}})
	d := into(t, find(hub, "Deployment", "flotilla-hub"), &appsv1.Deployment{})
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	for _, check := range []struct {
		what      string
		got, want any
	}{
		{"replicas", *d.Spec.Replicas, int32(3)},
		{"image", c.Image, "registry.example.com/flotilla/flotilla-hub:v1.2.3"},
		{"pull policy", c.ImagePullPolicy, corev1.PullIfNotPresent},
		{"priority class", pod.PriorityClassName, "system-cluster-critical"},
		{"node selector", pod.NodeSelector, map[string]string{"kubernetes.io/os": "linux"}},
		{"toleration", pod.Tolerations[0].Key, "node-role.kubernetes.io/control-plane"},
		{"node affinity added to the default anti-affinity", pod.Affinity.PodAntiAffinity != nil && pod.Affinity.NodeAffinity != nil, true},
		{"run as user", *pod.SecurityContext.RunAsUser, int64(65532)},
		{"pull secret", pod.ImagePullSecrets[0].Name, "regcred"},
		{"pod label", d.Spec.Template.Labels["example.com/tier"], "control"},
		{"selector kept", d.Spec.Selector.MatchLabels, map[string]string{"app.kubernetes.io/name": "flotilla-hub"}},
		{"last flag", c.Args[len(c.Args)-1], "--placement-workers=8"},
		{"memory limit", c.Resources.Limits[corev1.ResourceMemory], resource.MustParse("4Gi")},
		{"extra env", env(c, "GODEBUG") != nil, true},
	} {
		if d := cmp.Diff(check.want, check.got); d != "" {
			t.Errorf("hub %s (-want +got):\n%s", check.what, d)
		}
	}
	svc := into(t, find(hub, "Service", "flotilla-hub"), &corev1.Service{})
	if svc.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal || svc.Spec.Ports[0].Port != 443 || len(svc.Spec.LoadBalancerSourceRanges) != 1 {
		t.Errorf("hub Service spec %+v", svc.Spec)
	}
	upsync := find(hub, "ClusterRole", "flotilla-hub-upsync")
	rules, _, _ := unstructured.NestedSlice(upsync.Object, "rules")
	if d := cmp.Diff([]any{map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps", "secrets"}, "verbs": []any{"create", "update", "patch", "delete"}}}, rules); d != "" {
		t.Errorf("upsync rules (-want +got):\n%s", d)
	}

	agent := render(t, AgentChart, Release{ValuesFiles: []string{AgentChart + "/ci/full-values.yaml"}})
	ad := into(t, find(agent, "Deployment", "flotilla-agent"), &appsv1.Deployment{})
	ac := ad.Spec.Template.Spec.Containers[0]
	if d := cmp.Diff([]string{"run", "--metrics-bind-address=:8090", "--health-probe-bind-address=:8091", "--rbac-profile=least-privilege", "--zap-log-level=debug", "--properties-interval=1m"}, ac.Args); d != "" {
		t.Errorf("agent args (-want +got):\n%s", d)
	}
	if e := env(ac, "GOMEMLIMIT"); e == nil || e.Value != "200MiB" {
		t.Errorf("agent GOMEMLIMIT %+v, want 200MiB", e)
	}
	if find(agent, "ClusterRole", "flotilla-agent-namespaced") == nil || find(agent, "ClusterRole", "flotilla-agent-cluster-scoped-kinds") == nil {
		t.Error("the least-privilege profile's ClusterRoles are not rendered")
	}
}

func TestAgentChartRefusesWhatTheAgentCannotRunWith(t *testing.T) {
	bin, root := helm(t)
	for _, tc := range []struct {
		name    string
		r       Release
		wantErr string
	}{
		{name: "another namespace than the one join stores the identity in", r: Release{Namespace: "agents"}, wantErr: "install the agent in namespace flotilla-system"},
		{name: "two replicas of the member's single tunnel", r: Release{Set: []string{"replicas=2"}}, wantErr: "one agent per member"},
		{name: "an unknown RBAC profile", r: Release{Set: []string{"rbacProfile=admin"}}, wantErr: `rbacProfile "admin" is not full or least-privilege`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.r.Helm, tc.r.Chart = bin, filepath.Join(root, AgentChart)
			_, err := Template(context.Background(), tc.r)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
	stopped := render(t, AgentChart, Release{Set: []string{"replicas=0"}})
	if d := into(t, find(stopped, "Deployment", "flotilla-agent"), &appsv1.Deployment{}); *d.Spec.Replicas != 0 {
		t.Errorf("replicas=0 renders %d replicas", *d.Spec.Replicas)
	}
}
