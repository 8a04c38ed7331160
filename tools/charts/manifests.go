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

package charts

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/flotilla-io/flotilla/agent/install"
)

// HubManifests builds manifests/hub of the checkout at root with kustomize, as
// `kubectl apply -k manifests/hub` does (CRDs included), with the APIServices
// of manifests/hub/proxy that the chart renders too (values apiServices.enabled).
func HubManifests(root string) ([]*unstructured.Unstructured, error) {
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(root, "manifests", "hub"))
	if err != nil {
		return nil, fmt.Errorf("failed to build manifests/hub: %w", err)
	}
	data, err := res.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("failed to print manifests/hub: %w", err)
	}
	for _, name := range []string{"apiservice.yaml", "apiservice-plan.yaml"} {
		svc, err := os.ReadFile(filepath.Join(root, "manifests", "hub", "proxy", name))
		if err != nil {
			return nil, err
		}
		data = append(append(data, "\n---\n"...), svc...)
	}
	return Parse(data)
}

// AgentManifests is what `agent join --install --rbac-profile profile` applies
// with its default image (manifests/agent/rendered, embedded in the agent).
func AgentManifests(profile string) ([]*unstructured.Unstructured, error) {
	image, err := install.DefaultImage()
	if err != nil {
		return nil, err
	}
	objs, err := install.Render(profile, image)
	if err != nil {
		return nil, err
	}
	return canonical(objs)
}

// Check is one comparison `make verify` makes: a chart rendered with some values
// against the manifests it must agree with.
type Check struct {
	// Name says what is compared.
	Name string
	// Release is rendered by the chart (Helm is filled in by RunChecks).
	Release Release
	// Manifests returns what the chart must render.
	Manifests func() ([]*unstructured.Unstructured, error)
}

// Checks are the comparisons of the checkout at root: each chart with its
// default values, and the agent chart with each RBAC profile.
func Checks(root string) []Check {
	agent := func(profile string) Check {
		r := Release{Chart: filepath.Join(root, AgentChart)}
		if profile != install.ProfileFull {
			r.Set = []string{"rbacProfile=" + profile}
		}
		return Check{
			Name:      fmt.Sprintf("%s (rbacProfile %s) against what `agent join --install --rbac-profile %s` applies", AgentChart, profile, profile),
			Release:   r,
			Manifests: func() ([]*unstructured.Unstructured, error) { return AgentManifests(profile) },
		}
	}
	return []Check{
		{
			Name:      HubChart + " against manifests/hub",
			Release:   Release{Chart: filepath.Join(root, HubChart)},
			Manifests: func() ([]*unstructured.Unstructured, error) { return HubManifests(root) },
		},
		agent(install.ProfileFull),
		agent(install.ProfileLeastPrivilege),
	}
}

// Run renders the chart and compares it with the manifests (Diff).
func (c Check) Run(ctx context.Context) ([]string, error) {
	want, err := c.Manifests()
	if err != nil {
		return nil, err
	}
	got, err := Template(ctx, c.Release)
	if err != nil {
		return nil, err
	}
	return Diff(want, got), nil
}
