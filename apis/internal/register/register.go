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

// Package register adds an API group version's kinds to a runtime.Scheme (the
// API packages' SchemeBuilder, without controller-runtime's deprecated
// scheme.Builder).
package register

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Builder collects the kinds of one group version; each types file registers
// its own from init, and AddToScheme adds them with the meta/v1 option types.
type Builder struct {
	GroupVersion schema.GroupVersion
	objects      []runtime.Object
}

// Register records kinds of the group version.
func (b *Builder) Register(objects ...runtime.Object) *Builder {
	b.objects = append(b.objects, objects...)
	return b
}

// AddToScheme adds the registered kinds to s.
func (b *Builder) AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(b.GroupVersion, b.objects...)
	metav1.AddToGroupVersion(s, b.GroupVersion)
	return nil
}
