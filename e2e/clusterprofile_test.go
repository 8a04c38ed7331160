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

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/flotilla/e2e/framework"
	"github.com/flotilla-io/flotilla/pkg/apiproxy"
)

// profileNamespace is alice's namespace on member-1 in this test (not
// TestProxy's, which may still be terminating when one test follows the
// other).
const profileNamespace = "e2e-profile"

// profileMemberRBAC is what member-1's administrator writes for alice.
const profileMemberRBAC = `apiVersion: v1
kind: Namespace
metadata:
  name: e2e-profile
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: hub-alice-views
  namespace: e2e-profile
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: "flotilla:hub:e2e-proxy-alice"}
`

// clusterProfile is the part of a ClusterProfile this test reads.
type clusterProfile struct {
	Metadata struct {
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Status struct {
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
		AccessProviders []struct {
			Name    string `json:"name"`
			Cluster struct {
				Server string `json:"server"`
				CAData []byte `json:"certificate-authority-data"`
			} `json:"cluster"`
		} `json:"accessProviders"`
	} `json:"status"`
}

// TestAClusterProfileConsumerReachesAMemberThroughTheHub: the hub publishes
// a ClusterProfile for member-1 (the local fleet installs the CRD, as a hub
// cluster's administrator would), and a consumer that knows nothing but the
// profile and its own hub credentials reaches member-1 through the access
// provider it names, as the hub user it is.
func TestAClusterProfileConsumerReachesAMemberThroughTheHub(t *testing.T) {
	if provider.OnKind() {
		t.Skip("the kind fleet installs no ClusterProfile CRD (kwok fleets do)")
	}
	ctx := context.Background()
	hub := provider.HubKubeconfig()
	kubectlApply(t, hub, proxyHubRBAC)
	kubectlApply(t, provider.MemberKubeconfig("member-1"), profileMemberRBAC)

	var profile clusterProfile
	framework.Eventually(t, 60*time.Second, func() error {
		out, err := framework.Kubectl(ctx, hub, "", "-n", "flotilla-system", "get", "clusterprofile", "member-1", "-o", "json")
		if err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		profile = clusterProfile{}
		if err := json.Unmarshal([]byte(out), &profile); err != nil {
			return err
		}
		if got := profile.Metadata.Labels["x-k8s.io/cluster-manager"]; got != "flotilla" {
			return fmt.Errorf("label x-k8s.io/cluster-manager=%q, want flotilla", got)
		}
		healthy := ""
		for _, c := range profile.Status.Conditions {
			if c.Type == "ControlPlaneHealthy" {
				healthy = c.Status
			}
		}
		if healthy != "True" {
			return fmt.Errorf("ControlPlaneHealthy=%q, want True: %s", healthy, out)
		}
		if len(profile.Status.AccessProviders) != 1 || !strings.HasSuffix(profile.Status.AccessProviders[0].Cluster.Server, apiproxy.PathPrefix("member-1")) {
			return fmt.Errorf("access providers %+v, want one at the hub's proxy path for member-1", profile.Status.AccessProviders)
		}
		return nil
	})

	// The consumer's kubeconfig: its own hub credentials (here the admin's,
	// acting as alice), the server and CA the profile names.
	cfg, err := clientcmd.LoadFromFile(hub)
	if err != nil {
		t.Fatal(err)
	}
	access := profile.Status.AccessProviders[0].Cluster
	for _, c := range cfg.Clusters {
		c.Server = access.Server
		c.CertificateAuthority = ""
		c.CertificateAuthorityData = access.CAData
	}
	kc := filepath.Join(t.TempDir(), "member-1-from-profile.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, kc); err != nil {
		t.Fatal(err)
	}
	// RBAC written a moment ago takes effect within the hub's 10s review cache.
	framework.Eventually(t, 30*time.Second, func() error {
		out, err := framework.Kubectl(ctx, kc, "", "--as", proxyAlice, "-n", profileNamespace, "get", "configmaps", "-o", "name")
		if err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		if !strings.Contains(out, "configmap/kube-root-ca.crt") {
			return fmt.Errorf("member-1's ConfigMaps are not listed: %s", out)
		}
		return nil
	})
	// As alice, and only as far as member-1's RBAC lets her.
	out, err := framework.Kubectl(ctx, kc, "", "--as", proxyAlice, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
	if err != nil || strings.TrimSpace(out) != "flotilla:hub:"+proxyAlice {
		t.Errorf("whoami through the profile's access provider: %q, %v; want flotilla:hub:%s", out, err, proxyAlice)
	}
	if out, err := framework.Kubectl(ctx, kc, "", "--as", proxyAlice, "-n", "kube-system", "get", "secrets"); err == nil || !strings.Contains(out, "forbidden") {
		t.Errorf("alice read kube-system's Secrets on member-1 through the profile: %v\n%s", err, out)
	}
}
