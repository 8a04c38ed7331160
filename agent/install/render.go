package install

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/manifests"
)

// ImageName is the agent image's name in manifests/agent.
const ImageName = "flotilla-agent"

// kustomization is the part of manifests/agent/kustomization.yaml that install reads.
type kustomization struct {
	Resources []string `json:"resources"`
	Images    []struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		NewTag  string `json:"newTag"`
	} `json:"images"`
}

// DefaultImage is the agent image manifests/agent deploys: its images entry
// applied to flotilla-agent.
func DefaultImage() (string, error) {
	k, err := readKustomization(manifests.Agent)
	if err != nil {
		return "", err
	}
	return k.image(), nil
}

func (k *kustomization) image() string {
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
	return name + ":" + tag
}

func readKustomization(fsys fs.FS) (*kustomization, error) {
	data, err := fs.ReadFile(fsys, "agent/kustomization.yaml")
	if err != nil {
		return nil, fmt.Errorf("failed to read the embedded manifests/agent: %w", err)
	}
	k := &kustomization{}
	if err := yaml.Unmarshal(data, k); err != nil {
		return nil, fmt.Errorf("failed to parse manifests/agent/kustomization.yaml: %w", err)
	}
	return k, nil
}

// Render returns the objects of manifests/agent in the order its kustomization
// lists them, with the agent container's image set to image.
func Render(image string) ([]*unstructured.Unstructured, error) {
	return render(manifests.Agent, image)
}

func render(fsys fs.FS, image string) ([]*unstructured.Unstructured, error) {
	k, err := readKustomization(fsys)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, res := range k.Resources {
		if path.Ext(res) != ".yaml" || strings.Contains(res, "/") {
			return nil, fmt.Errorf("manifests/agent/kustomization.yaml lists %q: install renders only the .yaml files beside it", res)
		}
		data, err := fs.ReadFile(fsys, "agent/"+res)
		if err != nil {
			return nil, fmt.Errorf("failed to read manifests/agent/%s: %w", res, err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			obj := &unstructured.Unstructured{}
			if err := dec.Decode(&obj.Object); err != nil {
				if err == io.EOF {
					break
				}
				return nil, fmt.Errorf("failed to parse manifests/agent/%s: %w", res, err)
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
	}
	return objs, nil
}

// setImage replaces the image of every container whose image is flotilla-agent.
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
		if current == ImageName || strings.HasPrefix(current, ImageName+":") {
			c["image"] = image
			found = true
		}
	}
	if !found {
		return fmt.Errorf("manifests/agent: Deployment %s has no %s container", deploy.GetName(), ImageName)
	}
	return unstructured.SetNestedSlice(deploy.Object, containers, "spec", "template", "spec", "containers")
}
