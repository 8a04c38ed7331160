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

package workgen

import (
	"bytes"
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pipeline"
)

// provenance is what the work generator stamps on every manifest of a Work, for
// the member cluster to tell where an object came from (the agent adds the
// Work's name).
type provenance struct {
	// hub is the hub's name; "" leaves AnnotationHub out.
	hub string
	// placement is the placement the Work belongs to.
	placement pipeline.PlacementKey
	// resourceIndex is the index of the binding's resource snapshot.
	resourceIndex string
}

// placementRef is the value of AnnotationPlacement for a placement:
// "ClusterResourcePlacement/NAME" or "ResourcePlacement/NAMESPACE/NAME".
func placementRef(k pipeline.PlacementKey) string {
	return k.Kind() + "/" + k.String()
}

// annotations are the provenance annotations p stamps.
func (p provenance) annotations() map[string]string {
	out := map[string]string{
		placementv1beta1.AnnotationPlacement:     placementRef(p.placement),
		placementv1beta1.AnnotationResourceIndex: p.resourceIndex,
	}
	if p.hub != "" {
		out[placementv1beta1.AnnotationHub] = p.hub
	}
	return out
}

// stampProvenance returns the manifests with the provenance annotations set in
// their metadata, overriding any the resources themselves carry (a snapshot of
// objects that were themselves placed). The annotations are part of the Work's
// spec, so the Work (and its hash) changes exactly when the hub, the placement
// or the snapshot index does; the agent applies them like any other field and
// leaves them out of drift and difference reports. A manifest that is not a JSON
// object is left as it is, for the agent to report.
func stampProvenance(manifests []placementv1beta1.Manifest, p provenance) []placementv1beta1.Manifest {
	ann := p.annotations()
	out := make([]placementv1beta1.Manifest, 0, len(manifests))
	for _, m := range manifests {
		out = append(out, stampManifest(m, ann))
	}
	return out
}

func stampManifest(m placementv1beta1.Manifest, ann map[string]string) placementv1beta1.Manifest {
	// Numbers stay as written (UseNumber): a float64 would round large integers.
	dec := json.NewDecoder(bytes.NewReader(m.Raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil || dec.More() {
		return m
	}
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		if _, present := obj["metadata"]; present {
			return m
		}
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	have, ok := meta["annotations"].(map[string]any)
	if !ok {
		have = map[string]any{}
		meta["annotations"] = have
	}
	for k, v := range ann {
		have[k] = v
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return m
	}
	return placementv1beta1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
}
