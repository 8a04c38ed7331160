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

package apply

import placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"

// AnnotationWork is put on every object the Applier applies; it holds the name of the
// Work that applied it. An object is deleted for a Work only while it still carries
// that Work's name here. It is one of the provenance annotations
// (placementv1beta1.ProvenanceAnnotations); the hub puts the others on the manifests.
const AnnotationWork = placementv1beta1.AnnotationWork

// Labels of the record ConfigMaps.
const (
	labelManagedBy      = "app.kubernetes.io/managed-by"
	labelComponent      = "app.kubernetes.io/component"
	managedByAgent      = "flotilla-agent"
	componentWorkRecord = "work-record"
)

// maxDiffs is how many differing fields a DiffDetails lists at most (the API allows
// 100), and maxDiffValue how long a value in one may be.
const (
	maxDiffs     = 100
	maxDiffValue = 256
)

// maxMessage bounds condition messages (the API allows 32768 bytes).
const maxMessage = 4096

// LabelAppliedBy is put, with the value AppliedByAgent, on every object the Applier
// applies, so that the agent can watch exactly what it applied (a label selector)
// and nothing else.
const (
	LabelAppliedBy = "placement.flotilla.io/applied-by"
	AppliedByAgent = "flotilla-agent"
)

// AnnotationLastApplied holds, on objects applied with the ClientSideApply strategy,
// the configuration last applied (the manifest as JSON), the base of the next
// three-way merge, as kubectl's last-applied-configuration annotation does.
const AnnotationLastApplied = "placement.flotilla.io/last-applied-configuration"

// maxCorrectedPaths bounds DriftCorrections.LastDriftedPaths (the API allows 20), and
// maxFeedbackValue the length of one feedback value.
const (
	maxCorrectedPaths = 20
	maxFeedbackValue  = 1024
	// maxReportedStatus bounds the status reported for reportBack Mirror.
	maxReportedStatus = 16 << 10
)
