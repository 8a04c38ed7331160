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

package availability

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// object builds an object of a kind at a generation with the given top-level fields
// (spec, status, ...).
func object(apiVersion, kind string, generation int64, fields map[string]any) *unstructured.Unstructured {
	o := map[string]any{
		"apiVersion": apiVersion,
		"kind":       kind,
		"metadata":   map[string]any{"name": "x", "namespace": "ns", "generation": generation},
	}
	for k, v := range fields {
		o[k] = v
	}
	return &unstructured.Unstructured{Object: o}
}

func deployment(generation int64, replicas any, status map[string]any) *unstructured.Unstructured {
	spec := map[string]any{}
	if replicas != nil {
		spec["replicas"] = replicas
	}
	return object("apps/v1", "Deployment", generation, map[string]any{"spec": spec, "status": status})
}

func statefulSet(generation, replicas int64, status map[string]any) *unstructured.Unstructured {
	return object("apps/v1", "StatefulSet", generation, map[string]any{"spec": map[string]any{"replicas": replicas}, "status": status})
}

func daemonSet(generation int64, status map[string]any) *unstructured.Unstructured {
	return object("apps/v1", "DaemonSet", generation, map[string]any{"status": status})
}

func service(spec, status map[string]any) *unstructured.Unstructured {
	return object("v1", "Service", 1, map[string]any{"spec": spec, "status": status})
}

func withConditions(conds ...map[string]any) map[string]any {
	list := make([]any, 0, len(conds))
	for _, c := range conds {
		list = append(list, c)
	}
	return map[string]any{"conditions": list}
}

func conditionOf(typ, status, reason, message string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": message}
}

func isAvailable(msg string) Result {
	return Result{Available: metav1.ConditionTrue, Reason: placementv1beta1.ReasonAvailable, Message: msg}
}

func notAvailableYet(msg string) Result {
	return Result{Available: metav1.ConditionFalse, Reason: placementv1beta1.ReasonNotAvailableYet, Message: msg}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want Result
	}{
		// Deployment
		{
			name: "a deployment with every replica updated and available is available",
			obj:  deployment(2, int64(3), map[string]any{"observedGeneration": int64(2), "replicas": int64(3), "updatedReplicas": int64(3), "availableReplicas": int64(3)}),
			want: isAvailable("3/3 replicas available, 3/3 updated"),
		},
		{
			name: "a deployment without spec.replicas wants one replica",
			obj:  deployment(1, nil, map[string]any{"observedGeneration": int64(1), "updatedReplicas": int64(1), "availableReplicas": int64(1)}),
			want: isAvailable("1/1 replicas available, 1/1 updated"),
		},
		{
			name: "a deployment scaled to zero is available",
			obj:  deployment(1, int64(0), map[string]any{"observedGeneration": int64(1)}),
			want: isAvailable("0/0 replicas available, 0/0 updated"),
		},
		{
			name: "a deployment whose controller has not seen the latest generation is not available",
			obj:  deployment(3, int64(3), map[string]any{"observedGeneration": int64(2), "updatedReplicas": int64(3), "availableReplicas": int64(3)}),
			want: notAvailableYet("the controller has not observed generation 3 yet (observed 2)"),
		},
		{
			name: "a deployment with no status at all is not available",
			obj:  deployment(1, int64(2), nil),
			want: notAvailableYet("the controller has not observed generation 1 yet (observed 0)"),
		},
		{
			name: "a deployment with fewer available replicas than desired is not available",
			obj:  deployment(1, int64(3), map[string]any{"observedGeneration": int64(1), "updatedReplicas": int64(3), "availableReplicas": int64(2), "unavailableReplicas": int64(1)}),
			want: notAvailableYet("2/3 replicas available, 3/3 updated, 1 unavailable"),
		},
		{
			name: "a deployment in the middle of a rollout is not available",
			obj:  deployment(1, int64(3), map[string]any{"observedGeneration": int64(1), "updatedReplicas": int64(1), "availableReplicas": int64(3)}),
			want: notAvailableYet("3/3 replicas available, 1/3 updated"),
		},
		{
			name: "a deployment with an unavailable surge replica is not available",
			obj:  deployment(1, int64(3), map[string]any{"observedGeneration": int64(1), "updatedReplicas": int64(3), "availableReplicas": int64(3), "unavailableReplicas": int64(1)}),
			want: notAvailableYet("3/3 replicas available, 3/3 updated, 1 unavailable"),
		},
		{
			name: "a deployment whose counts were decoded as floats is read correctly",
			obj:  deployment(1, float64(2), map[string]any{"observedGeneration": float64(1), "updatedReplicas": float64(2), "availableReplicas": float64(2)}),
			want: isAvailable("2/2 replicas available, 2/2 updated"),
		},
		{
			name: "a deployment with a malformed status is not available and says which field",
			obj:  deployment(1, int64(2), map[string]any{"observedGeneration": int64(1), "availableReplicas": "two"}),
			want: notAvailableYet("cannot read status.availableReplicas: two is not an integer"),
		},
		// StatefulSet
		{
			name: "a statefulset with every replica available on the current revision is available",
			obj:  statefulSet(4, 2, map[string]any{"observedGeneration": int64(4), "availableReplicas": int64(2), "currentRevision": "web-1", "updateRevision": "web-1"}),
			want: isAvailable(`2/2 replicas available, revision "web-1"`),
		},
		{
			name: "a statefulset whose controller is behind is not available",
			obj:  statefulSet(4, 2, map[string]any{"observedGeneration": int64(3), "availableReplicas": int64(2), "currentRevision": "web-1", "updateRevision": "web-1"}),
			want: notAvailableYet("the controller has not observed generation 4 yet (observed 3)"),
		},
		{
			name: "a statefulset with missing replicas is not available",
			obj:  statefulSet(1, 3, map[string]any{"observedGeneration": int64(1), "availableReplicas": int64(1), "currentRevision": "web-1", "updateRevision": "web-1"}),
			want: notAvailableYet("1/3 replicas available"),
		},
		{
			name: "a statefulset still rolling out a revision is not available",
			obj:  statefulSet(2, 2, map[string]any{"observedGeneration": int64(2), "availableReplicas": int64(2), "currentRevision": "web-1", "updateRevision": "web-2"}),
			want: notAvailableYet(`2/2 replicas available, rolling out revision "web-2" (current revision "web-1")`),
		},
		// DaemonSet
		{
			name: "a daemonset available and updated on every node is available",
			obj:  daemonSet(1, map[string]any{"observedGeneration": int64(1), "desiredNumberScheduled": int64(3), "numberAvailable": int64(3), "updatedNumberScheduled": int64(3)}),
			want: isAvailable("3/3 pods available, 3/3 updated"),
		},
		{
			name: "a daemonset with pods missing on some nodes is not available",
			obj:  daemonSet(1, map[string]any{"observedGeneration": int64(1), "desiredNumberScheduled": int64(3), "numberAvailable": int64(2), "updatedNumberScheduled": int64(3)}),
			want: notAvailableYet("2/3 pods available, 3/3 updated"),
		},
		{
			name: "a daemonset with old pods is not available",
			obj:  daemonSet(1, map[string]any{"observedGeneration": int64(1), "desiredNumberScheduled": int64(3), "numberAvailable": int64(3), "updatedNumberScheduled": int64(1)}),
			want: notAvailableYet("3/3 pods available, 1/3 updated"),
		},
		{
			name: "a daemonset whose controller is behind is not available",
			obj:  daemonSet(2, map[string]any{"observedGeneration": int64(1)}),
			want: notAvailableYet("the controller has not observed generation 2 yet (observed 1)"),
		},
		// Service
		{
			name: "a ClusterIP service with an IP is available",
			obj:  service(map[string]any{"type": "ClusterIP", "clusterIP": "10.0.0.7"}, nil),
			want: isAvailable("cluster IP 10.0.0.7 assigned"),
		},
		{
			name: "a service without a type and with an IP is available",
			obj:  service(map[string]any{"clusterIP": "10.0.0.8"}, nil),
			want: isAvailable("cluster IP 10.0.0.8 assigned"),
		},
		{
			name: "a service without a cluster IP is not available",
			obj:  service(map[string]any{"type": "NodePort"}, nil),
			want: notAvailableYet("no cluster IP assigned yet"),
		},
		{
			name: "a headless service is available",
			obj:  service(map[string]any{"clusterIP": "None"}, nil),
			want: isAvailable("headless service"),
		},
		{
			name: "an ExternalName service is available",
			obj:  service(map[string]any{"type": "ExternalName", "externalName": "example.com"}, nil),
			want: isAvailable("ExternalName service"),
		},
		{
			name: "a LoadBalancer service without an ingress point is not available even with a cluster IP",
			obj:  service(map[string]any{"type": "LoadBalancer", "clusterIP": "10.0.0.9"}, map[string]any{"loadBalancer": map[string]any{}}),
			want: notAvailableYet("waiting for the load balancer to get an ingress point"),
		},
		{
			name: "a LoadBalancer service with an ingress point is available",
			obj: service(map[string]any{"type": "LoadBalancer", "clusterIP": "10.0.0.9"}, map[string]any{"loadBalancer": map[string]any{
				"ingress": []any{map[string]any{"ip": "192.0.2.1"}, map[string]any{"hostname": "lb.example.com"}},
			}}),
			want: isAvailable("load balancer ingress: 192.0.2.1, lb.example.com"),
		},
		// CustomResourceDefinition
		{
			name: "an established CRD is available",
			obj: object("apiextensions.k8s.io/v1", "CustomResourceDefinition", 1, map[string]any{"status": withConditions(
				conditionOf("NamesAccepted", "True", "NoConflicts", ""), conditionOf("Established", "True", "InitialNamesAccepted", ""))}),
			want: isAvailable("the CustomResourceDefinition is established"),
		},
		{
			name: "a CRD without conditions is not available",
			obj:  object("apiextensions.k8s.io/v1", "CustomResourceDefinition", 1, nil),
			want: notAvailableYet("the CustomResourceDefinition is not established yet"),
		},
		{
			name: "a CRD whose names conflict is not available and says why",
			obj: object("apiextensions.k8s.io/v1", "CustomResourceDefinition", 1, map[string]any{"status": withConditions(
				conditionOf("NamesAccepted", "False", "AllKindsConflict", `"widgets" is already in use`), conditionOf("Established", "False", "NotAccepted", "not all names are accepted"))}),
			want: notAvailableYet(`the names of the CustomResourceDefinition are not accepted: AllKindsConflict: "widgets" is already in use`),
		},
		{
			name: "a CRD not established yet is not available",
			obj: object("apiextensions.k8s.io/v1", "CustomResourceDefinition", 1, map[string]any{"status": withConditions(
				conditionOf("Established", "False", "Installing", "the initial names have been accepted"))}),
			want: notAvailableYet("the CustomResourceDefinition is not established yet: Installing: the initial names have been accepted"),
		},
		// PodDisruptionBudget
		{
			name: "a PDB with enough healthy pods is available",
			obj:  object("policy/v1", "PodDisruptionBudget", 2, map[string]any{"status": map[string]any{"observedGeneration": int64(2), "currentHealthy": int64(3), "desiredHealthy": int64(2)}}),
			want: isAvailable("3 healthy pods, 2 required"),
		},
		{
			name: "a PDB with too few healthy pods is not available",
			obj:  object("policy/v1", "PodDisruptionBudget", 2, map[string]any{"status": map[string]any{"observedGeneration": int64(2), "currentHealthy": int64(1), "desiredHealthy": int64(2)}}),
			want: notAvailableYet("1 healthy pods, 2 required"),
		},
		{
			name: "a PDB whose controller is behind is not available",
			obj:  object("policy/v1", "PodDisruptionBudget", 2, map[string]any{"status": map[string]any{"observedGeneration": int64(1), "currentHealthy": int64(3), "desiredHealthy": int64(2)}}),
			want: notAvailableYet("the controller has not observed generation 2 yet (observed 1)"),
		},
		// Job
		{
			name: "a job with the Complete condition is available",
			obj:  object("batch/v1", "Job", 1, map[string]any{"status": withConditions(conditionOf("Complete", "True", "CompletionsReached", ""))}),
			want: isAvailable("the job has completed"),
		},
		{
			name: "a job that succeeded as often as asked is available",
			obj:  object("batch/v1", "Job", 1, map[string]any{"spec": map[string]any{"completions": int64(2)}, "status": map[string]any{"succeeded": int64(2)}}),
			want: isAvailable("2/2 completions succeeded"),
		},
		{
			name: "a running job is not available",
			obj:  object("batch/v1", "Job", 1, map[string]any{"spec": map[string]any{"completions": int64(3)}, "status": map[string]any{"succeeded": int64(1), "active": int64(1)}}),
			want: notAvailableYet("1/3 completions succeeded"),
		},
		{
			name: "a failed job is not available and says why",
			obj:  object("batch/v1", "Job", 1, map[string]any{"status": withConditions(conditionOf("Failed", "True", "BackoffLimitExceeded", "Job has reached the specified backoff limit"))}),
			want: notAvailableYet("the job has failed: BackoffLimitExceeded: Job has reached the specified backoff limit"),
		},
		// PersistentVolumeClaim
		{
			name: "a bound claim is available",
			obj:  object("v1", "PersistentVolumeClaim", 0, map[string]any{"spec": map[string]any{"volumeName": "pv-1"}, "status": map[string]any{"phase": "Bound"}}),
			want: isAvailable(`bound to volume "pv-1"`),
		},
		{
			name: "a pending claim is not available",
			obj:  object("v1", "PersistentVolumeClaim", 0, map[string]any{"status": map[string]any{"phase": "Pending"}}),
			want: notAvailableYet("the claim is Pending, not bound yet"),
		},
		{
			name: "a claim without a status is not available",
			obj:  object("v1", "PersistentVolumeClaim", 0, nil),
			want: notAvailableYet("the claim is Pending, not bound yet"),
		},
		// Configuration-like kinds
		{
			name: "a namespace is available once applied",
			obj:  object("v1", "Namespace", 0, map[string]any{"status": map[string]any{"phase": "Active"}}),
			want: isAvailable("Namespace is available once applied"),
		},
		{
			name: "a terminating namespace is not available",
			obj:  object("v1", "Namespace", 0, map[string]any{"status": map[string]any{"phase": "Terminating"}}),
			want: notAvailableYet("the namespace is terminating"),
		},
		{
			name: "a configmap is available once applied",
			obj:  object("v1", "ConfigMap", 0, nil),
			want: isAvailable("ConfigMap is available once applied"),
		},
		{
			name: "a secret is available once applied",
			obj:  object("v1", "Secret", 0, nil),
			want: isAvailable("Secret is available once applied"),
		},
		{
			name: "a service account is available once applied",
			obj:  object("v1", "ServiceAccount", 0, nil),
			want: isAvailable("ServiceAccount is available once applied"),
		},
		{
			name: "a resource quota is available once applied",
			obj:  object("v1", "ResourceQuota", 0, nil),
			want: isAvailable("ResourceQuota is available once applied"),
		},
		{
			name: "a limit range is available once applied",
			obj:  object("v1", "LimitRange", 0, nil),
			want: isAvailable("LimitRange is available once applied"),
		},
		{
			name: "a role is available once applied",
			obj:  object("rbac.authorization.k8s.io/v1", "Role", 0, nil),
			want: isAvailable("Role.rbac.authorization.k8s.io is available once applied"),
		},
		{
			name: "a role binding is available once applied",
			obj:  object("rbac.authorization.k8s.io/v1", "RoleBinding", 0, nil),
			want: isAvailable("RoleBinding.rbac.authorization.k8s.io is available once applied"),
		},
		{
			name: "a cluster role is available once applied",
			obj:  object("rbac.authorization.k8s.io/v1", "ClusterRole", 0, nil),
			want: isAvailable("ClusterRole.rbac.authorization.k8s.io is available once applied"),
		},
		{
			name: "a cluster role binding is available once applied",
			obj:  object("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", 0, nil),
			want: isAvailable("ClusterRoleBinding.rbac.authorization.k8s.io is available once applied"),
		},
		{
			name: "a network policy is available once applied",
			obj:  object("networking.k8s.io/v1", "NetworkPolicy", 1, nil),
			want: isAvailable("NetworkPolicy.networking.k8s.io is available once applied"),
		},
		// Anything else
		{
			name: "a custom resource cannot be tracked and counts as available",
			obj:  object("example.com/v1", "Widget", 1, nil),
			want: Result{Available: metav1.ConditionTrue, Reason: placementv1beta1.ReasonNotTrackable, Message: "the availability of Widget.example.com cannot be tracked; it is taken as available once applied"},
		},
		{
			name: "a pod cannot be tracked and counts as available",
			obj:  object("v1", "Pod", 1, nil),
			want: Result{Available: metav1.ConditionTrue, Reason: placementv1beta1.ReasonNotTrackable, Message: "the availability of Pod cannot be tracked; it is taken as available once applied"},
		},
		{
			name: "an established CRD that is being deleted is not available",
			obj: func() *unstructured.Unstructured {
				o := object("apiextensions.k8s.io/v1", "CustomResourceDefinition", 1, map[string]any{"status": withConditions(conditionOf("Established", "True", "", ""))})
				now := metav1.Now()
				o.SetDeletionTimestamp(&now)
				return o
			}(),
			want: notAvailableYet("the object is being deleted"),
		},
		{
			name: "a configmap that is being deleted is not available",
			obj: func() *unstructured.Unstructured {
				o := object("v1", "ConfigMap", 0, nil)
				now := metav1.Now()
				o.SetDeletionTimestamp(&now)
				return o
			}(),
			want: notAvailableYet("the object is being deleted"),
		},
		{
			name: "an object that does not exist is not available",
			obj:  nil,
			want: notAvailableYet("the object does not exist"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Check(tt.obj)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Check() mismatch (-want +got):\n%s", diff)
			}
			if want := tt.want.Available == metav1.ConditionTrue; got.IsAvailable() != want {
				t.Errorf("IsAvailable() = %v, want %v", got.IsAvailable(), want)
			}
		})
	}
}

func TestTrackable(t *testing.T) {
	tests := []struct {
		name string
		gk   schema.GroupKind
		want bool
	}{
		{name: "deployments are trackable", gk: schema.GroupKind{Group: "apps", Kind: "Deployment"}, want: true},
		{name: "configmaps are trackable", gk: schema.GroupKind{Kind: "ConfigMap"}, want: true},
		{name: "a kind of the same name in another group is not trackable", gk: schema.GroupKind{Group: "example.com", Kind: "Deployment"}, want: false},
		{name: "pods are not trackable", gk: schema.GroupKind{Kind: "Pod"}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Trackable(tt.gk); got != tt.want {
				t.Errorf("Trackable(%v) = %v, want %v", tt.gk, got, tt.want)
			}
		})
	}
}
