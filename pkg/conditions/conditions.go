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

// Package conditions holds the few helpers every controller uses to set and read
// metav1.Conditions, so that observedGeneration and transition times are handled
// one way everywhere.
package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Set adds or updates a condition; lastTransitionTime moves only when the status
// changes. It reports whether anything changed.
func Set(conds *[]metav1.Condition, typ string, status metav1.ConditionStatus, reason, message string, generation int64) bool {
	return meta.SetStatusCondition(conds, metav1.Condition{
		Type:               typ,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: generation,
	})
}

// Get returns the condition of a type, or nil.
func Get(conds []metav1.Condition, typ string) *metav1.Condition {
	return meta.FindStatusCondition(conds, typ)
}

// IsTrue reports whether the condition of a type is True.
func IsTrue(conds []metav1.Condition, typ string) bool {
	return meta.IsStatusConditionTrue(conds, typ)
}

// IsFalse reports whether the condition of a type is False.
func IsFalse(conds []metav1.Condition, typ string) bool {
	return meta.IsStatusConditionFalse(conds, typ)
}

// IsCurrentTrue reports whether the condition is True and was observed at the
// given generation.
func IsCurrentTrue(conds []metav1.Condition, typ string, generation int64) bool {
	c := Get(conds, typ)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == generation
}

// Changed lists the condition types whose status differs between two lists
// (a type missing from before counts as changed).
func Changed(before, after []metav1.Condition) []string {
	var out []string
	for _, a := range after {
		b := Get(before, a.Type)
		if b == nil || b.Status != a.Status {
			out = append(out, a.Type)
		}
	}
	return out
}

// Remove deletes the condition of a type. It reports whether there was one.
func Remove(conds *[]metav1.Condition, typ string) bool {
	return meta.RemoveStatusCondition(conds, typ)
}
