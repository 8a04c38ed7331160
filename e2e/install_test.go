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
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
)

// Every kind of the API contract must be installed by manifests/hub.
func TestHubManifestsInstallEveryKindEstablished(t *testing.T) {
	ctx := context.Background()
	out, err := framework.Kubectl(ctx, provider.HubKubeconfig(), "", "get", "crds",
		"-o", `jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Established")].status}{"\n"}{end}`)
	if err != nil {
		t.Fatalf("kubectl get crds: %v\n%s", err, out)
	}
	established := map[string]string{}
	for _, line := range strings.Fields(out) {
		name, status, _ := strings.Cut(line, "=")
		established[name] = status
	}
	for _, crd := range []string{
		"memberclusters.cluster.flotilla.io",
		"locations.cluster.flotilla.io",
		"clusterresourceplacements.placement.flotilla.io",
		"resourceplacements.placement.flotilla.io",
		"clusterresourcebindings.placement.flotilla.io",
		"clusterresourcesnapshots.placement.flotilla.io",
		"clusterschedulingpolicysnapshots.placement.flotilla.io",
		"works.placement.flotilla.io",
		"clusterresourceoverrides.placement.flotilla.io",
		"resourceoverrides.placement.flotilla.io",
		"clusterresourceplacementevictions.placement.flotilla.io",
		"clusterresourceplacementdisruptionbudgets.placement.flotilla.io",
		"clusterstagedupdatestrategies.placement.flotilla.io",
		"clusterstagedupdateruns.placement.flotilla.io",
		"clusterapprovalrequests.placement.flotilla.io",
	} {
		if established[crd] != "True" {
			t.Errorf("CRD %s: Established=%q, want True", crd, established[crd])
		}
	}
}

// The hub process runs with the token of the ServiceAccount that manifests/hub
// creates, holds the leader lease with only the RBAC those manifests grant, and
// that RBAC does not reach beyond what the hub needs.
func TestHubRunsWithItsServiceAccountAndLeastPrivilege(t *testing.T) {
	ctx := context.Background()
	const sa = "system:serviceaccount:flotilla-system:flotilla-hub"
	out, err := framework.Kubectl(ctx, provider.HubServiceAccountKubeconfig(), "", "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
	if err != nil {
		t.Fatalf("kubectl auth whoami: %v\n%s", err, out)
	}
	if out != sa {
		t.Fatalf("the hub's kubeconfig authenticates as %q, want %q", out, sa)
	}

	hub, err := framework.Client(provider.HubKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	// controller-runtime names the holder "<host name>_<uuid>". On kwok the hub
	// pods are fakes that run nothing, so the holder on this host is the hub
	// process; on kind the hub runs as the manifests' pods, whose host names are
	// their pod names.
	hosts, err := hubHosts(ctx, hub)
	if err != nil {
		t.Fatal(err)
	}
	var firstRenew time.Time
	framework.Eventually(t, time.Minute, func() error {
		lease := &coordinationv1.Lease{}
		if err := hub.Get(ctx, types.NamespacedName{Namespace: "flotilla-system", Name: "flotilla-hub"}, lease); err != nil {
			return err
		}
		holder := ptr.Deref(lease.Spec.HolderIdentity, "")
		if host, _, _ := strings.Cut(holder, "_"); !slices.Contains(hosts, host) {
			return fmt.Errorf("leader lease held by %q, want one of the hubs on %v", holder, hosts)
		}
		renew := lease.Spec.RenewTime.Time
		if firstRenew.IsZero() {
			firstRenew = renew
			return fmt.Errorf("waiting for the hub to renew its lease")
		}
		if !renew.After(firstRenew) {
			return fmt.Errorf("lease renewed at %s, not after %s", renew, firstRenew)
		}
		return nil
	})

	for _, c := range []struct {
		verb, resource, namespace string
		want                      string
	}{
		{"list", "configmaps", "default", "yes"}, // reads what placements select
		{"create", "memberclusters.cluster.flotilla.io", "", "yes"},
		{"create", "works.placement.flotilla.io", "flotilla-member-x", "yes"},
		{"create", "secrets", "flotilla-system", "yes"},
		{"create", "secrets", "default", "no"}, // writes Secrets only in its namespace
		{"delete", "pods", "default", "no"},
		{"create", "deployments.apps", "default", "no"},
		{"update", "clusterroles.rbac.authorization.k8s.io", "", "no"},
		{"create", "leases.coordination.k8s.io", "kube-system", "no"},
	} {
		args := []string{"auth", "can-i", c.verb, c.resource, "--as", sa}
		if c.namespace != "" {
			args = append(args, "--namespace", c.namespace)
		}
		out, _ := framework.Kubectl(ctx, provider.HubKubeconfig(), "", args...)
		// The answer is the last line; kubectl may warn before it.
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if got := strings.TrimSpace(lines[len(lines)-1]); got != c.want {
			t.Errorf("can the hub %s %s in %q? got %q, want %q", c.verb, c.resource, c.namespace, got, c.want)
		}
	}
}

// A placement that breaks an API rule is refused by the API server with a message
// that names the rule, and nothing is stored.
func TestInvalidPlacementIsRefusedWithTheRule(t *testing.T) {
	ctx := context.Background()
	const manifest = `apiVersion: placement.flotilla.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: e2e-pickfixed-without-names
spec:
  resourceSelectors:
  - {group: "", version: v1, kind: Namespace, name: default}
  policy:
    placementType: PickFixed
`
	out, err := framework.Kubectl(ctx, provider.HubKubeconfig(), manifest, "apply", "-f", "-")
	if err == nil {
		t.Fatalf("kubectl apply succeeded, want it refused:\n%s", out)
	}
	if !strings.Contains(out, "placementType PickFixed requires clusterNames") {
		t.Fatalf("refusal does not name the rule:\n%s", out)
	}
	hub, err := framework.Client(provider.HubKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	err = hub.Get(ctx, types.NamespacedName{Name: "e2e-pickfixed-without-names"}, &placementv1beta1.ClusterResourcePlacement{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("the refused placement was stored (get: %v)", err)
	}
}

// hubHosts are the host names the hub runs on: this machine on kwok, its pods on kind.
func hubHosts(ctx context.Context, hub client.Client) ([]string, error) {
	if !provider.OnKind() {
		host, err := os.Hostname()
		return []string{host}, err
	}
	pods := &corev1.PodList{}
	if err := hub.List(ctx, pods, client.InNamespace("flotilla-system"), client.MatchingLabels{"app.kubernetes.io/name": "flotilla-hub"}); err != nil {
		return nil, err
	}
	var hosts []string
	for _, p := range pods.Items {
		hosts = append(hosts, p.Name)
	}
	return hosts, nil
}

// The hub's Lease renewals go to the API server's leader-election priority
// level (manifests/hub/flowschema.yaml): behind the status writes of thousands
// of members connecting at once, a renewal in the hub's own level missed its
// deadline. The API server names the FlowSchema and priority level that
// classified a request in its response headers.
func TestHubLeaseRenewalsHaveTheLeaderElectionPriorityLevel(t *testing.T) {
	ctx := context.Background()
	admin, err := framework.Client(provider.HubKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	schema := &flowcontrolv1.FlowSchema{}
	if err := admin.Get(ctx, types.NamespacedName{Name: "flotilla-hub-leases"}, schema); err != nil {
		t.Fatalf("manifests/hub installs FlowSchema flotilla-hub-leases: %v", err)
	}
	level := &flowcontrolv1.PriorityLevelConfiguration{}
	if err := admin.Get(ctx, types.NamespacedName{Name: schema.Spec.PriorityLevelConfiguration.Name}, level); err != nil {
		t.Fatalf("the FlowSchema's priority level: %v", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", provider.HubServiceAccountKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	var got http.Header
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil {
				got = resp.Header.Clone()
			}
			return resp, err
		})
	}
	hub, err := client.New(cfg, client.Options{Scheme: framework.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	if err := hub.Get(ctx, types.NamespacedName{Namespace: "flotilla-system", Name: "flotilla-hub"}, &coordinationv1.Lease{}); err != nil {
		t.Fatalf("the hub's ServiceAccount reads its leader lease: %v", err)
	}
	if uid := got.Get("X-Kubernetes-PF-FlowSchema-UID"); uid != string(schema.UID) {
		t.Errorf("a Lease read by the hub was classified by FlowSchema UID %q, want flotilla-hub-leases (%s)", uid, schema.UID)
	}
	if uid := got.Get("X-Kubernetes-PF-PriorityLevel-UID"); uid != string(level.UID) {
		t.Errorf("a Lease read by the hub went to priority level UID %q, want %s (%s)", uid, level.Name, level.UID)
	}
	if level.Name != "leader-election" {
		t.Errorf("FlowSchema flotilla-hub-leases names priority level %q, want leader-election", level.Name)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
