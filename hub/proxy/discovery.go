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

package proxy

import (
	"encoding/json"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	planv1beta1 "github.com/flotilla-io/flotilla/apis/plan/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/apiproxy"
)

// The discovery documents of the aggregated API: kube-apiserver reads
// /apis/proxy.flotilla.io/v1beta1 to mark the APIService available, and
// kubectl reads them to learn the resource.
var (
	groupVersion = metav1.GroupVersionForDiscovery{GroupVersion: apiproxy.Group + "/" + apiproxy.Version, Version: apiproxy.Version}
	apiGroup     = metav1.APIGroup{
		TypeMeta:         metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"},
		Name:             apiproxy.Group,
		Versions:         []metav1.GroupVersionForDiscovery{groupVersion},
		PreferredVersion: groupVersion,
	}
	apiResources = metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: groupVersion.GroupVersion,
		APIResources: []metav1.APIResource{{
			Name:       apiproxy.Resource + "/" + apiproxy.Subresource,
			Namespaced: false,
			Kind:       "MemberClusterProxy",
			Verbs:      metav1.Verbs{"get", "create", "update", "patch", "delete"},
		}},
	}
)

// The discovery documents of the plan API (plan.go), served when the hub
// serves plans.
var (
	planGroupVersion = metav1.GroupVersionForDiscovery{GroupVersion: planv1beta1.GroupVersion.String(), Version: planv1beta1.Version}
	planAPIGroup     = metav1.APIGroup{
		TypeMeta:         metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"},
		Name:             planv1beta1.Group,
		Versions:         []metav1.GroupVersionForDiscovery{planGroupVersion},
		PreferredVersion: planGroupVersion,
	}
	planAPIResources = metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: planGroupVersion.GroupVersion,
		APIResources: []metav1.APIResource{{
			Name:       planv1beta1.Resource,
			Namespaced: false,
			Kind:       planv1beta1.Kind,
			Verbs:      metav1.Verbs{"create"},
		}},
	}
)

// serveDiscovery answers the discovery paths of the aggregated APIs (the
// plan API's only when plans is true) and the health paths; it reports
// false for any other path. Discovery needs no user: it says nothing about
// members.
func serveDiscovery(w http.ResponseWriter, r *http.Request, plans bool) bool {
	var doc any
	planGroup := "/apis/" + planv1beta1.Group
	switch p := strings.TrimSuffix(r.URL.Path, "/"); {
	case p == "/apis":
		list := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{apiGroup}}
		if plans {
			list.Groups = append(list.Groups, planAPIGroup)
		}
		doc = list
	case p == "/apis/"+apiproxy.Group:
		doc = apiGroup
	case p == "/apis/"+apiproxy.Group+"/"+apiproxy.Version:
		doc = apiResources
	case plans && p == planGroup:
		doc = planAPIGroup
	case plans && p == planGroup+"/"+planv1beta1.Version:
		doc = planAPIResources
	case p == "/healthz" || p == "/readyz" || p == "/livez":
		_, _ = w.Write([]byte("ok"))
		return true
	default:
		return false
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(doc)
	return true
}
