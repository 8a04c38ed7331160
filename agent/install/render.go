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

package install

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/manifests"
)

// ImageName is the agent image's name in manifests/agent.
const ImageName = "flotilla-agent"

// RBAC profiles of manifests/agent: the folder each one is built from.
const (
	// ProfileFull gives the agent full access on the member (manifests/agent).
	ProfileFull = "full"
	// ProfileLeastPrivilege gives it namespaced objects in the namespaces it
	// places and a list of cluster-scoped kinds (manifests/agent/least-privilege).
	ProfileLeastPrivilege = "least-privilege"
)

// renderedFiles maps a profile to its manifests, built from manifests/agent by
// `make manifests` (tools/agentmanifests) so that kustomize is not part of
// the agent binary.
var renderedFiles = map[string]string{
	ProfileFull:           "agent/rendered/full.yaml",
	ProfileLeastPrivilege: "agent/rendered/least-privilege.yaml",
}

// baseKustomization is where manifests/agent names its image (every profile
// builds on the base).
const baseKustomization = "agent/base/kustomization.yaml"

// DefaultImage is the agent image manifests/agent deploys: its images entry
// for flotilla-agent; in a released agent, the release's agent image.
func DefaultImage() (string, error) {
	if releaseImage != "" {
		return releaseImage, nil
	}
	data, err := fs.ReadFile(manifests.Agent, baseKustomization)
	if err != nil {
		return "", fmt.Errorf("failed to read the embedded manifests/agent: %w", err)
	}
	k := struct {
		Images []struct {
			Name    string `json:"name"`
			NewName string `json:"newName"`
			NewTag  string `json:"newTag"`
		} `json:"images"`
	}{}
	if err := yaml.Unmarshal(data, &k); err != nil {
		return "", fmt.Errorf("failed to parse manifests/%s: %w", baseKustomization, err)
	}
	name, tag := ImageName, "latest"
	for _, i := range k.Images {
		if i.Name == ImageName {
			if i.NewName != "" {
				name = i.NewName
			}
			if i.NewTag != "" {
				tag = i.NewTag
			}
		}
	}
	return name + ":" + tag, nil
}

// releaseImage, when set, is the agent image of the release this agent is
// from (repository:version): tools/release sets it at link time with
// -ldflags "-X github.com/flotilla-io/flotilla/agent/install.releaseImage=...",
// so that a released agent installs its own release, not the tag the
// manifests name.
var releaseImage string

// Render returns manifests/agent for an RBAC profile (empty is ProfileFull), as
// kustomize builds it (manifests/agent/rendered), with the agent container's
// image set. Objects come in kubectl's apply order (namespaces and RBAC before
// the Deployment).
func Render(profile, image string) ([]*unstructured.Unstructured, error) {
	if profile == "" {
		profile = ProfileFull
	}
	file, ok := renderedFiles[profile]
	if !ok {
		return nil, fmt.Errorf("unknown RBAC profile %q: use %s or %s", profile, ProfileFull, ProfileLeastPrivilege)
	}
	data, err := fs.ReadFile(manifests.Agent, file)
	if err != nil {
		return nil, fmt.Errorf("failed to read the embedded manifests/%s: %w", file, err)
	}
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("failed to parse manifests/%s: %w", file, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		if obj.GetKind() == "Deployment" {
			if err := setImage(obj, image); err != nil {
				return nil, err
			}
		}
		objs = append(objs, obj)
	}
	return objs, nil
}

// setImage replaces the image of every container whose image is flotilla-agent
// (with any registry or tag).
func setImage(deploy *unstructured.Unstructured, image string) error {
	containers, _, err := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "containers")
	if err != nil {
		return fmt.Errorf("manifests/agent: Deployment %s has malformed containers: %w", deploy.GetName(), err)
	}
	found := false
	for i := range containers {
		c, ok := containers[i].(map[string]any)
		if !ok {
			continue
		}
		current, _ := c["image"].(string)
		if imageName(current) == ImageName {
			c["image"] = image
			found = true
		}
	}
	if !found {
		return fmt.Errorf("manifests/agent: Deployment %s has no %s container", deploy.GetName(), ImageName)
	}
	return unstructured.SetNestedSlice(deploy.Object, containers, "spec", "template", "spec", "containers")
}

// imageName is an image reference's last path element without tag or digest.
func imageName(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndex(ref, "/"); i >= 0 {
		ref = ref[i+1:]
	}
	if i := strings.Index(ref, ":"); i >= 0 {
		ref = ref[:i]
	}
	return ref
}
