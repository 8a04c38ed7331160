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

package properties

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func node(providerID, cpu, memory string) corev1.Node {
	list := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse(memory),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	return corev1.Node{Spec: corev1.NodeSpec{ProviderID: providerID}, Status: corev1.NodeStatus{Capacity: list, Allocatable: list}}
}

func requests(cpu, memory string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse(memory),
	}}
}

func pod(nodeName string, phase corev1.PodPhase, containers ...corev1.ResourceRequirements) corev1.Pod {
	p := corev1.Pod{Spec: corev1.PodSpec{NodeName: nodeName}, Status: corev1.PodStatus{Phase: phase}}
	for _, r := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Resources: r})
	}
	return p
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name  string
		nodes []corev1.Node
		pods  []corev1.Pod
		want  Summary
	}{
		{
			name: "a cluster without nodes has nothing",
			want: Summary{},
		},
		{
			name:  "node resources are summed and the provider comes from the provider ID",
			nodes: []corev1.Node{node("kwok://a", "4", "8Gi"), node("kwok://b", "2", "4Gi")},
			want: Summary{
				NodeCount:   2,
				Provider:    "kwok",
				Capacity:    map[string]string{"cpu": "6", "memory": "12Gi", "pods": "220"},
				Allocatable: map[string]string{"cpu": "6", "memory": "12Gi", "pods": "220"},
				Available:   map[string]string{"cpu": "6", "memory": "12Gi", "pods": "220"},
			},
		},
		{
			name:  "scheduled running and pending pods use what they request; unscheduled and finished pods do not",
			nodes: []corev1.Node{node("aws:///us-east-1a/i-1", "4", "8Gi")},
			pods: []corev1.Pod{
				pod("n", corev1.PodRunning, requests("500m", "1Gi"), requests("500m", "1Gi")),
				pod("n", corev1.PodPending, requests("1", "2Gi")),
				pod("", corev1.PodPending, requests("1", "2Gi")),
				pod("n", corev1.PodSucceeded, requests("1", "2Gi")),
				pod("n", corev1.PodFailed, requests("1", "2Gi")),
			},
			want: Summary{
				NodeCount:   1,
				Provider:    "aws",
				Capacity:    map[string]string{"cpu": "4", "memory": "8Gi", "pods": "110"},
				Allocatable: map[string]string{"cpu": "4", "memory": "8Gi", "pods": "110"},
				Available:   map[string]string{"cpu": "2", "memory": "4Gi", "pods": "108"},
			},
		},
		{
			name:  "available never goes below zero",
			nodes: []corev1.Node{node("", "1", "1Gi")},
			pods:  []corev1.Pod{pod("n", corev1.PodRunning, requests("2", "2Gi"))},
			want: Summary{
				NodeCount:   1,
				Capacity:    map[string]string{"cpu": "1", "memory": "1Gi", "pods": "110"},
				Allocatable: map[string]string{"cpu": "1", "memory": "1Gi", "pods": "110"},
				Available:   map[string]string{"cpu": "0", "memory": "0", "pods": "109"},
			},
		},
		{
			name:  "the most common provider wins",
			nodes: []corev1.Node{node("gce://p/z/a", "1", "1Gi"), node("azure:///s/a", "1", "1Gi"), node("azure:///s/b", "1", "1Gi")},
			want: Summary{
				NodeCount:   3,
				Provider:    "azure",
				Capacity:    map[string]string{"cpu": "3", "memory": "3Gi", "pods": "330"},
				Allocatable: map[string]string{"cpu": "3", "memory": "3Gi", "pods": "330"},
				Available:   map[string]string{"cpu": "3", "memory": "3Gi", "pods": "330"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Summarize(tt.nodes, tt.pods)); diff != "" {
				t.Errorf("Summarize() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodRequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	tests := []struct {
		name string
		pod  corev1.Pod
		want map[string]string
	}{
		{
			name: "app containers are summed",
			pod:  pod("n", corev1.PodRunning, requests("100m", "100Mi"), requests("200m", "100Mi")),
			want: map[string]string{"cpu": "300m", "memory": "200Mi"},
		},
		{
			name: "a larger init container counts instead of the app containers",
			pod: func() corev1.Pod {
				p := pod("n", corev1.PodRunning, requests("100m", "100Mi"))
				p.Spec.InitContainers = []corev1.Container{{Resources: requests("1", "50Mi")}}
				return p
			}(),
			want: map[string]string{"cpu": "1", "memory": "100Mi"},
		},
		{
			name: "sidecars add to the app containers and to the init containers after them",
			pod: func() corev1.Pod {
				p := pod("n", corev1.PodRunning, requests("100m", "100Mi"))
				p.Spec.InitContainers = []corev1.Container{
					{Resources: requests("50m", "10Mi"), RestartPolicy: &always},
					{Resources: requests("500m", "10Mi")},
				}
				return p
			}(),
			want: map[string]string{"cpu": "550m", "memory": "110Mi"},
		},
		{
			name: "pod-level requests and overhead count",
			pod: func() corev1.Pod {
				p := pod("n", corev1.PodRunning, requests("100m", "100Mi"))
				p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}
				p.Spec.Overhead = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("28Mi")}
				return p
			}(),
			want: map[string]string{"cpu": "2", "memory": "128Mi"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, toStrings(PodRequests(&tt.pod))); diff != "" {
				t.Errorf("PodRequests() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProviderOf(t *testing.T) {
	for id, want := range map[string]string{
		"kwok://node-1":                  "kwok",
		"aws:///us-east-1a/i-0abc":       "aws",
		"gce://project/zone/instance":    "gce",
		"azure:///subscriptions/x/y":     "azure",
		"kind://docker/kind/kind-worker": "kind",
		"":                               "",
		"no-scheme":                      "",
		"Bad Scheme://x":                 "",
	} {
		if got := providerOf(id); got != want {
			t.Errorf("providerOf(%q) = %q, want %q", id, got, want)
		}
	}
}

// The pod cache keeps podUsage, which the informer's store must still key by
// namespace and name, and which sums to what Summarize sums from the pod.
func TestTrimPodKeepsAKeyableUsage(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", ResourceVersion: "7", Labels: map[string]string{"a": "b"}},
		Spec: corev1.PodSpec{
			NodeName: "n1",
			Containers: []corev1.Container{
				{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")}}},
				{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.5")}}},
			},
			InitContainers: []corev1.Container{
				{RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}},
			},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	obj, err := trimPod(pod)
	if err != nil {
		t.Fatal(err)
	}
	u, ok := obj.(*podUsage)
	if !ok {
		t.Fatalf("trimPod returned %T, want *podUsage", obj)
	}
	if key, err := cache.MetaNamespaceKeyFunc(u); err != nil || key != "ns/p" {
		t.Errorf("key = %q, %v; want ns/p", key, err)
	}
	want := &podUsage{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", ResourceVersion: "7"}, holds: true, milliCPU: 750, memory: (64 << 20) + (1 << 30)}
	if diff := cmp.Diff(want, u, cmp.AllowUnexported(podUsage{})); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	pod.Status.Phase = corev1.PodSucceeded
	if usageOf(pod).holds {
		t.Errorf("a Succeeded pod holds resources")
	}
}
