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
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Summary is what the nodes and pods of a cluster say about it.
type Summary struct {
	// NodeCount is the number of nodes.
	NodeCount int
	// Provider is the scheme of the nodes' spec.providerID ("kwok", "aws",
	// "gce", "azure", ...), the most common one when they differ; empty when
	// no node has one.
	Provider string
	// Capacity and Allocatable are the sums over nodes of Resources, as
	// quantity strings.
	Capacity, Allocatable map[string]string
	// Available is Allocatable minus the requests of the pods that are
	// scheduled and not terminated (for "pods": minus their number), never
	// below zero.
	Available map[string]string
}

// Summarize sums up nodes and pods. Pods that are not scheduled or have
// terminated are not counted.
func Summarize(nodes []corev1.Node, pods []corev1.Pod) Summary {
	usage := make([]*podUsage, 0, len(pods))
	for i := range pods {
		usage = append(usage, usageOf(&pods[i]))
	}
	return summarize(nodes, usage)
}

// podUsage is what Summarize needs of a pod, and all that the Collector's
// cache keeps of one: about a tenth of a trimmed corev1.Pod.
type podUsage struct {
	// ObjectMeta holds only the name, namespace and resourceVersion, which key
	// the cache.
	metav1.ObjectMeta
	// holds is set when the pod is scheduled and has not terminated.
	holds bool
	// milliCPU and memory are the pod's requests (PodRequests).
	milliCPU, memory int64
}

// usageOf is the podUsage of pod.
func usageOf(pod *corev1.Pod) *podUsage {
	u := &podUsage{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, ResourceVersion: pod.ResourceVersion},
		holds:      pod.Spec.NodeName != "" && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed,
	}
	req := PodRequests(pod)
	if q, ok := req[corev1.ResourceCPU]; ok {
		u.milliCPU = q.MilliValue()
	}
	if q, ok := req[corev1.ResourceMemory]; ok {
		u.memory = q.Value()
	}
	return u
}

func summarize(nodes []corev1.Node, pods []*podUsage) Summary {
	capacity := corev1.ResourceList{}
	allocatable := corev1.ResourceList{}
	providers := map[string]int{}
	for i := range nodes {
		addTo(capacity, nodes[i].Status.Capacity)
		addTo(allocatable, nodes[i].Status.Allocatable)
		if p := providerOf(nodes[i].Spec.ProviderID); p != "" {
			providers[p]++
		}
	}

	var milliCPU, memory, scheduled int64
	for _, pod := range pods {
		if !pod.holds {
			continue
		}
		scheduled++
		milliCPU += pod.milliCPU
		memory += pod.memory
	}
	// A resource no pod requests is not subtracted (allocatable keeps its format).
	requested := corev1.ResourceList{}
	if milliCPU != 0 {
		requested[corev1.ResourceCPU] = *resource.NewMilliQuantity(milliCPU, resource.DecimalSI)
	}
	if memory != 0 {
		requested[corev1.ResourceMemory] = *resource.NewQuantity(memory, resource.BinarySI)
	}
	requested[corev1.ResourcePods] = *resource.NewQuantity(scheduled, resource.DecimalSI)

	available := corev1.ResourceList{}
	for _, name := range Resources {
		q, ok := allocatable[name]
		if !ok {
			continue
		}
		q = q.DeepCopy()
		if r, ok := requested[name]; ok {
			q.Sub(r)
		}
		if q.Sign() < 0 {
			q = *resource.NewQuantity(0, q.Format)
		}
		available[name] = q
	}

	return Summary{
		NodeCount:   len(nodes),
		Provider:    mostCommon(providers),
		Capacity:    toStrings(capacity),
		Allocatable: toStrings(allocatable),
		Available:   toStrings(available),
	}
}

// PodRequests returns what a pod requests of Resources other than pods, the
// way the scheduler counts it: pod-level requests where set; otherwise the
// sum of the app containers and sidecars, or the largest init container
// (with the sidecars started before it) if that is more; plus the pod's
// overhead.
func PodRequests(pod *corev1.Pod) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, name := range Resources {
		if name == corev1.ResourcePods {
			continue
		}
		if pod.Spec.Resources != nil {
			if q, ok := pod.Spec.Resources.Requests[name]; ok {
				out[name] = q.DeepCopy()
				continue
			}
		}
		sum := resource.Quantity{}
		for _, c := range pod.Spec.Containers {
			add(&sum, c.Resources.Requests, name)
		}
		sidecars := resource.Quantity{}
		largestInit := resource.Quantity{}
		for _, c := range pod.Spec.InitContainers {
			if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				add(&sidecars, c.Resources.Requests, name)
				// A sidecar runs alongside the init containers after it.
				if sidecars.Cmp(largestInit) > 0 {
					largestInit = sidecars.DeepCopy()
				}
				continue
			}
			q := sidecars.DeepCopy()
			add(&q, c.Resources.Requests, name)
			if q.Cmp(largestInit) > 0 {
				largestInit = q
			}
		}
		sum.Add(sidecars)
		if largestInit.Cmp(sum) > 0 {
			sum = largestInit
		}
		add(&sum, pod.Spec.Overhead, name)
		if !sum.IsZero() {
			out[name] = sum
		}
	}
	return out
}

func add(sum *resource.Quantity, list corev1.ResourceList, name corev1.ResourceName) {
	if q, ok := list[name]; ok {
		sum.Add(q)
	}
}

// addTo adds the Resources in list to sum.
func addTo(sum, list corev1.ResourceList) {
	for _, name := range Resources {
		q, ok := list[name]
		if !ok {
			continue
		}
		s, ok := sum[name]
		if !ok {
			sum[name] = q.DeepCopy()
			continue
		}
		s.Add(q)
		sum[name] = s
	}
}

func toStrings(list corev1.ResourceList) map[string]string {
	if len(list) == 0 {
		return nil
	}
	out := make(map[string]string, len(list))
	for name, q := range list {
		out[string(name)] = q.String()
	}
	return out
}

var schemePattern = regexp.MustCompile(`^[a-z][a-z0-9+.-]*$`)

// providerOf returns the scheme of a node's providerID ("aws:///us-east-1a/i-0abc"
// is "aws"), or "" if it has none.
func providerOf(providerID string) string {
	scheme, _, ok := strings.Cut(providerID, "://")
	if !ok {
		return ""
	}
	scheme = strings.ToLower(scheme)
	if !schemePattern.MatchString(scheme) {
		return ""
	}
	return scheme
}

// mostCommon returns the key with the highest count, the first by name on a
// tie, or "" for an empty map.
func mostCommon(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	best := ""
	for _, k := range keys {
		if best == "" || counts[k] > counts[best] {
			best = k
		}
	}
	return best
}
