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

package taints

import (
	"math"
	"strings"
	"time"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// maxSeconds is the largest whole number of seconds a time.Duration holds.
const maxSeconds = math.MaxInt64 / int64(time.Second)

// SaturatingSeconds converts a user's count of seconds to a duration: negative
// counts are 0, and counts past what a time.Duration holds (about 292 years)
// are the largest duration rather than a wrapped, negative one.
func SaturatingSeconds(seconds int64) time.Duration {
	switch {
	case seconds <= 0:
		return 0
	case seconds > maxSeconds:
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(seconds) * time.Second
}

// Tolerates reports whether the toleration matches the taint: its effect is
// empty (all effects) or the taint's, and
//   - with operator Exists, its key is empty (all keys) or the taint's;
//   - with operator Equal (the default), its key and value are the taint's.
func Tolerates(tol *placementv1beta1.Toleration, taint *clusterv1beta1.Taint) bool {
	if tol.Effect != "" && tol.Effect != taint.Effect {
		return false
	}
	switch tol.Operator {
	case placementv1beta1.TolerationOpExists:
		return tol.Key == "" || tol.Key == taint.Key
	case placementv1beta1.TolerationOpEqual, "":
		return tol.Key == taint.Key && tol.Value == taint.Value
	}
	return false
}

// Matching returns the first of the tolerations that matches the taint, or nil.
func Matching(taint *clusterv1beta1.Taint, tolerations []placementv1beta1.Toleration) *placementv1beta1.Toleration {
	for i := range tolerations {
		if Tolerates(&tolerations[i], taint) {
			return &tolerations[i]
		}
	}
	return nil
}

// Tolerance is how long a placement may stay on a cluster with one NoExecute
// taint.
type Tolerance struct {
	// Tolerated is whether a toleration matches the taint (false: the hub's
	// default applies).
	Tolerated bool
	// Forever is whether the placement may stay for good.
	Forever bool
	// For is how long the placement may stay after the taint's timeAdded
	// (unless Forever).
	For time.Duration
}

// NoExecuteTolerance returns how long the tolerations tolerate the NoExecute
// taint: the first matching toleration decides (forever without
// tolerationSeconds, otherwise SaturatingSeconds of it); with none matching,
// defaultFor.
func NoExecuteTolerance(taint *clusterv1beta1.Taint, tolerations []placementv1beta1.Toleration, defaultFor time.Duration) Tolerance {
	tol := Matching(taint, tolerations)
	switch {
	case tol == nil:
		return Tolerance{For: max(defaultFor, 0)}
	case tol.TolerationSeconds == nil:
		return Tolerance{Tolerated: true, Forever: true}
	}
	return Tolerance{Tolerated: true, For: SaturatingSeconds(*tol.TolerationSeconds)}
}

// Deadline returns when the tolerance of the taint runs out: For after the
// taint's timeAdded, or after now when the hub has not recorded timeAdded yet.
// ok is false for a tolerance that never runs out.
func (t Tolerance) Deadline(taint *clusterv1beta1.Taint, now time.Time) (deadline time.Time, ok bool) {
	if t.Forever {
		return time.Time{}, false
	}
	since := now
	if taint.TimeAdded != nil {
		since = taint.TimeAdded.Time
	}
	return since.Add(t.For), true
}

// Format writes a taint the way kubectl does: key=value:Effect, or key:Effect.
func Format(t *clusterv1beta1.Taint) string {
	var b strings.Builder
	b.WriteString(t.Key)
	if t.Value != "" {
		b.WriteString("=" + t.Value)
	}
	b.WriteString(":" + string(t.Effect))
	return b.String()
}
