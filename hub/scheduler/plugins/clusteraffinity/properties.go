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

package clusteraffinity

import (
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/scheduler/framework"
)

// PropertyValue returns the value of a cluster property (framework.PropertyValue).
func PropertyValue(mc *clusterv1beta1.MemberCluster, name string) (resource.Quantity, bool) {
	return framework.PropertyValue(mc, name)
}
