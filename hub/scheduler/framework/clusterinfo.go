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

package framework

import (
	"k8s.io/apimachinery/pkg/labels"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
)

// ClusterInfo is a member cluster as one cycle sees it.
type ClusterInfo struct {
	// Index is the cluster's position in CycleState.Clusters. Plugins keep per-cluster
	// data in slices indexed by it, which is cheaper than maps keyed by name.
	Index int

	// Name is the cluster's name.
	Name string

	// Cluster is the MemberCluster. Plugins must not modify it.
	Cluster *clusterv1beta1.MemberCluster

	// Bound is whether the placement has an active binding to the cluster.
	Bound bool
}

// Labels returns the cluster's labels as selectors see them: the MemberCluster's
// labels, with the built-in label cluster.flotilla.io/name always holding the
// cluster's name (even before the hub has written it). It does not allocate.
func (c *ClusterInfo) Labels() labels.Labels { return (*clusterLabels)(c) }

// clusterLabels implements labels.Labels over a ClusterInfo.
type clusterLabels ClusterInfo

// Has reports whether the cluster has the label.
func (l *clusterLabels) Has(key string) bool {
	if key == clusterv1beta1.LabelClusterName {
		return true
	}
	_, ok := l.Cluster.Labels[key]
	return ok
}

// Get returns the cluster's value of the label, or "".
func (l *clusterLabels) Get(key string) string {
	v, _ := l.Lookup(key)
	return v
}

// Lookup returns the cluster's value of the label and whether it has it.
func (l *clusterLabels) Lookup(key string) (string, bool) {
	if key == clusterv1beta1.LabelClusterName {
		return l.Name, true
	}
	v, ok := l.Cluster.Labels[key]
	return v, ok
}

// LabelValue returns the cluster's value of the label and whether it has it, with
// the built-in labels of Labels.
func (c *ClusterInfo) LabelValue(key string) (string, bool) {
	return (*clusterLabels)(c).Lookup(key)
}
