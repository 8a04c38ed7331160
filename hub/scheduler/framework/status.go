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
	"errors"
	"strings"
)

// Code is the outcome of a plugin call.
type Code int

// The outcomes a plugin can report. An error outcome exists too, but only FromError
// makes one; see Status.IsError.
const (
	// Success: the plugin ran and has no objection. A nil *Status means Success.
	Success Code = iota

	// ClusterUnschedulable: the cluster cannot take the placement now, although it
	// may match the policy: it is not eligible (not joined, disconnected, unhealthy,
	// leaving), has a taint the placement does not tolerate, or would break a
	// topology spread constraint. The placement is not newly placed there; where it
	// is already bound it stays, and the reason is reported with the decision.
	ClusterUnschedulable

	// ClusterMismatch: the cluster does not match what the placement selects (its
	// cluster affinity, strict labels, placement affinity or Location). The placement
	// is not placed there; where it is already bound the cluster no longer matches:
	// PickAll removes it, PickN and PickFixed keep it and report it as misplaced.
	ClusterMismatch

	// ClusterAlreadySelected: the placement is already bound to the cluster, so the
	// cluster is not a candidate for a new binding. It is not a failure: the framework
	// keeps the existing binding.
	ClusterAlreadySelected

	// Skip: returned by a pre-stage (PreFilter, PreScore) with nothing to do; the
	// plugin's matching stage (Filter, Score) is not run in this cycle.
	Skip

	// ClusterEvicted: the placement must not be on the cluster at all, whatever the
	// policy says, such as after a ClusterResourcePlacementEviction. The placement
	// is not placed there; where it is already bound, the binding goes in every
	// placement type (unlike ClusterMismatch, which PickN and PickFixed keep as
	// misplaced), and a PickN placement picks a replacement among the other
	// clusters in the same cycle.
	ClusterEvicted

	// codeError: the plugin could not decide. Unexported so that the only way to make
	// an error status is FromError, which always carries the error.
	codeError
)

// String returns the code's name.
func (c Code) String() string {
	switch c {
	case Success:
		return "Success"
	case ClusterUnschedulable:
		return "ClusterUnschedulable"
	case ClusterMismatch:
		return "ClusterMismatch"
	case ClusterAlreadySelected:
		return "ClusterAlreadySelected"
	case Skip:
		return "Skip"
	case ClusterEvicted:
		return "ClusterEvicted"
	case codeError:
		return "Error"
	default:
		return "Unknown"
	}
}

// Status is the result of a plugin call. A nil *Status is Success. Statuses are
// immutable once returned, so a plugin may return the same *Status for many
// clusters.
type Status struct {
	code    Code
	reasons []string
	err     error
	// explain and cluster, for a status made by NewStatusFor, give its only
	// reason when it is read.
	explain Explainer
	cluster *ClusterInfo
}

// Explainer says why a plugin rejects a cluster; see NewStatusFor.
type Explainer interface {
	// Explain returns the reason of the rejection of the cluster. It must return
	// the same reason every time it is asked about the same cluster in a cycle,
	// whatever the cycle selected in between: a filter whose verdict depends on
	// the selection (a ReservePlugin's) says why with NewStatus.
	Explain(cluster *ClusterInfo) string
}

// NewStatus returns a status with the code and human-readable reasons, which the
// framework reports in the cluster's decision. code must not be the error code —
// use FromError — and NewStatus(Success) with no reasons is better written nil.
func NewStatus(code Code, reasons ...string) *Status {
	if code == codeError {
		return FromError(errors.New(strings.Join(reasons, "; ")))
	}
	return &Status{code: code, reasons: reasons}
}

// NewStatusFor returns a status with the code (a rejection) whose only reason is
// explain.Explain(cluster), formatted only when the status's reasons are read
// (Reasons, Message, String). A filter that rejects many clusters with a reason
// of their own returns it, so that the cycle formats only the reasons its
// decisions and the Scheduled condition show. The reason must be read in the
// cycle that made the status (the framework does), as explain reads its state.
func NewStatusFor(code Code, explain Explainer, cluster *ClusterInfo) *Status {
	if code == codeError || code == Success || code == Skip {
		return NewStatus(code, explain.Explain(cluster))
	}
	return &Status{code: code, explain: explain, cluster: cluster}
}

// FromError returns an error status carrying err; nil for a nil err.
func FromError(err error) *Status {
	if err == nil {
		return nil
	}
	return &Status{code: codeError, reasons: []string{err.Error()}, err: err}
}

// Code returns the status's code; Success for a nil status.
func (s *Status) Code() Code {
	if s == nil {
		return Success
	}
	return s.code
}

// IsSuccess reports whether the status is nil or Success.
func (s *Status) IsSuccess() bool { return s.Code() == Success }

// IsSkip reports whether the status is Skip.
func (s *Status) IsSkip() bool { return s.Code() == Skip }

// IsError reports whether the status is an error status (made by FromError).
func (s *Status) IsError() bool { return s.Code() == codeError }

// IsRejection reports whether the status keeps the placement from being newly
// placed on a cluster: ClusterUnschedulable, ClusterMismatch,
// ClusterAlreadySelected or ClusterEvicted.
func (s *Status) IsRejection() bool {
	switch s.Code() {
	case ClusterUnschedulable, ClusterMismatch, ClusterAlreadySelected, ClusterEvicted:
		return true
	}
	return false
}

// Reasons returns the status's reasons.
func (s *Status) Reasons() []string {
	if s == nil {
		return nil
	}
	if s.explain != nil {
		return []string{s.explain.Explain(s.cluster)}
	}
	return s.reasons
}

// Message returns the reasons joined by "; ".
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	if s.explain != nil {
		return s.explain.Explain(s.cluster)
	}
	if len(s.reasons) == 1 {
		return s.reasons[0]
	}
	return strings.Join(s.reasons, "; ")
}

// AsError returns the error of an error status, and nil for any other status.
func (s *Status) AsError() error {
	if !s.IsError() {
		return nil
	}
	return s.err
}

// String returns the code and the message, for logs and test failures.
func (s *Status) String() string {
	if msg := s.Message(); msg != "" {
		return s.Code().String() + ": " + msg
	}
	return s.Code().String()
}
