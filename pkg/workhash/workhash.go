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

// Package workhash computes the content hash of a Work's spec. The hub and the
// agent both use it: the agent reports which spec it holds, the hub sends only
// Works whose hash differs, and status is accepted only for the current spec.
package workhash

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// Of returns the hex sha256 of the canonical JSON of a Work spec: object keys
// sorted at every level, manifests included, and no insignificant whitespace, so
// that the hub and the agent get the same hash for the same spec however its
// manifests were serialised on the way.
func Of(spec *placementv1beta1.WorkSpec) string {
	sum := sha256.Sum256(canonicalSpec(spec))
	return hex.EncodeToString(sum[:])
}

func canonicalSpec(spec *placementv1beta1.WorkSpec) []byte {
	raw, err := json.Marshal(spec)
	if err != nil {
		// Only a manifest that is not JSON gets here; hash its bytes as they are, so
		// that such a spec still gets a stable hash of its own.
		return fallbackSpec(spec)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep numbers exactly as written
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	canonical, err := json.Marshal(v) // maps marshal with sorted keys
	if err != nil {
		return raw
	}
	return canonical
}

// fallbackSpec serialises a spec whose manifests are not all valid JSON.
func fallbackSpec(spec *placementv1beta1.WorkSpec) []byte {
	manifests := make([][]byte, 0, len(spec.Workload.Manifests))
	for _, m := range spec.Workload.Manifests {
		manifests = append(manifests, m.Raw)
	}
	raw, _ := json.Marshal(struct {
		Manifests      [][]byte
		ApplyStrategy  *placementv1beta1.ApplyStrategy
		DeleteStrategy *placementv1beta1.DeleteStrategy
	}{manifests, spec.ApplyStrategy, spec.DeleteStrategy})
	return raw
}
