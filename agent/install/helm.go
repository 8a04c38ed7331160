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
	"fmt"
	"strings"
)

// The agent's Helm chart, which installs what Install applies (charts/flotilla-agent;
// `make verify` checks that the two agree).
const (
	// HelmChart is the chart's folder in a Flotilla checkout.
	HelmChart = "charts/flotilla-agent"
	// HelmRelease is the release name the printed command installs.
	HelmRelease = "flotilla-agent"
)

// HelmCommand returns the helm command that installs the agent as Install does
// with image (default: DefaultImage) and RBAC profile (default: ProfileFull),
// on the member that kubeconfig names (none: helm's default). The image is
// spelled out, so that the command installs the same agent whatever version
// the chart is.
func HelmCommand(image, profile, kubeconfig string) (string, error) {
	if image == "" {
		var err error
		if image, err = DefaultImage(); err != nil {
			return "", err
		}
	}
	if profile == "" {
		profile = ProfileFull
	}
	if _, ok := renderedFiles[profile]; !ok {
		return "", fmt.Errorf("unknown RBAC profile %q: use %s or %s", profile, ProfileFull, ProfileLeastPrivilege)
	}
	repository, tag, digest := splitImage(image)
	args := []string{"helm", "upgrade", "--install", HelmRelease, HelmChart, "--namespace", "flotilla-system",
		"--set", "image.repository=" + repository}
	switch {
	case digest != "":
		args = append(args, "--set", "image.digest="+digest)
	case tag != "":
		args = append(args, "--set", "image.tag="+tag)
	default:
		args = append(args, "--set", "image.tag=latest")
	}
	args = append(args, "--set", "rbacProfile="+profile)
	if kubeconfig != "" {
		args = append(args, "--kubeconfig", kubeconfig)
	}
	for i, a := range args {
		args[i] = shellQuote(a)
	}
	return strings.Join(args, " "), nil
}

// splitImage splits an image reference into repository, tag and digest.
func splitImage(ref string) (repository, tag, digest string) {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref, digest = ref[:i], ref[i+1:]
	}
	// A colon after the last slash starts the tag (one before it is a
	// registry's port).
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref, tag = ref[:i], ref[i+1:]
	}
	return ref, tag, digest
}

// shellQuote quotes s for a POSIX shell when it has characters the shell
// would read.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@+,%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
