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

package scheduler

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/flotilla-io/flotilla/hub/pipeline"
)

// maxBindingName is the longest binding name: a Work carries its binding's name
// as the value of the label LabelParentBinding, which holds at most 63
// characters.
const maxBindingName = 63

// bindingHashLen is how many hex digits of the hash a hashed binding name ends
// with (64 bits).
const bindingHashLen = 16

// BindingName is the name the scheduler gives a new binding of the placement key
// to cluster, for a scheduling group ("" for the placement's own resources).
// Bindings are found by their labels, never by this name, so bindings named
// otherwise (by an older hub) keep working.
//
// The name is readable, <placement>-<cluster>, when only one binding can have it:
//   - there is no scheduling group,
//   - the placement's name has no '-', so the first '-' of the name ends it
//     (a cluster's name is a DNS label: it may hold '-' but never '.'), and
//   - it is at most 63 characters.
//
// Otherwise it is hashed: <placement>[-<group>]-<cluster>, cut to leave room,
// then '.' and 16 hex digits of a SHA-256 of the exact (placement namespace,
// placement name, group, cluster) tuple; at most 63 characters. A hashed name
// is never a readable one, nor a name of the older scheme
// <placement>[-<group>]-<cluster>: those end in -<cluster>, so the text after
// their last '.' (if any) holds a '-', where a hashed name's is hex digits only.
func BindingName(key pipeline.PlacementKey, group, cluster string) string {
	if group == "" && !strings.Contains(key.Name, "-") {
		if name := key.Name + "-" + cluster; len(name) <= maxBindingName {
			return name
		}
	}
	return HashedBindingName(key, group, cluster)
}

// HashedBindingName is the hashed form of BindingName, which the scheduler also
// uses when another placement's binding already has the readable name (one an
// older hub named <placement>-<cluster>).
func HashedBindingName(key pipeline.PlacementKey, group, cluster string) string {
	// NUL cannot occur in any of the names: the tuple is read back exactly.
	sum := sha256.Sum256([]byte(key.Namespace + "\x00" + key.Name + "\x00" + group + "\x00" + cluster))
	prefix := key.Name
	if group != "" {
		prefix += "-" + group
	}
	prefix += "-" + cluster
	if max := maxBindingName - 1 - bindingHashLen; len(prefix) > max {
		prefix = prefix[:max]
	}
	// Each dot-separated part of a name must end with a letter or digit.
	prefix = strings.TrimRight(prefix, "-.")
	return prefix + "." + hex.EncodeToString(sum[:])[:bindingHashLen]
}
