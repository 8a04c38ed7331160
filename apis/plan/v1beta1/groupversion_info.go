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
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/flotilla/apis/internal/register"
)

// The API group, version and the one resource of this API.
const (
	// Group is the API group the hub serves plans under.
	Group = "plan.flotilla.io"
	// Version is its only version.
	Version = "v1beta1"
	// Resource is the resource that is created to get a plan.
	Resource = "placementplans"
	// Kind is its kind.
	Kind = "PlacementPlan"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: Group, Version: Version}

	// SchemeBuilder registers the kinds of this API with a runtime.Scheme.
	SchemeBuilder = &register.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the kinds of this API to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
