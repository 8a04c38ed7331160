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

package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Accepts reports whether the tunnel accepts a member certificate with the
// given serial (hexadecimal).
func (id *MemberIdentity) Accepts(serial string) bool {
	return id != nil && serial != "" && (serial == id.CertificateSerial || serial == id.PreviousCertificateSerial)
}

// MemberIdentity is the member certificate the hub accepts for a member's
// agent. The join endpoint records it when it signs a certificate (at join,
// re-join and renewal); the tunnel refuses every other certificate, so a
// certificate of an earlier identity (a deleted and re-joined member, a
// renewed certificate) no longer opens a session.
type MemberIdentity struct {
	// CertificateSerial is the serial number, in hexadecimal, of the only
	// member certificate the tunnel accepts.
	// +required
	CertificateSerial string `json:"certificateSerial"`

	// PreviousCertificateSerial is the certificate a renewal replaced. It is
	// still accepted until the agent connects with the new one (an agent may
	// stop between the hub signing a certificate and storing it); a re-join
	// clears it at once.
	// +optional
	PreviousCertificateSerial string `json:"previousCertificateSerial,omitempty"`

	// NotAfter is when that certificate expires; the agent renews it before
	// two thirds of its lifetime have passed.
	// +optional
	NotAfter *metav1.Time `json:"notAfter,omitempty"`

	// IssuedAt is when the hub signed it.
	// +optional
	IssuedAt *metav1.Time `json:"issuedAt,omitempty"`
}
