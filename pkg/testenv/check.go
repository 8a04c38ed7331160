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

package testenv

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// CheckValidation fails the test unless err is what a request should have returned:
// nil when wantRefusal is empty, otherwise an Invalid error (HTTP 422) whose message
// contains wantRefusal.
func CheckValidation(t testing.TB, err error, wantRefusal string) {
	t.Helper()
	switch {
	case wantRefusal == "" && err != nil:
		t.Fatalf("want the request accepted, got: %v", err)
	case wantRefusal == "":
		return
	case err == nil:
		t.Fatalf("want the request refused with %q, but it was accepted", wantRefusal)
	case !apierrors.IsInvalid(err):
		t.Fatalf("want an Invalid error containing %q, got: %v", wantRefusal, err)
	case !strings.Contains(err.Error(), wantRefusal):
		t.Fatalf("want the request refused with %q, got: %v", wantRefusal, err)
	}
}
