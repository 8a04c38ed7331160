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

package cli

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
)

// hubKubeconfig is a kubeconfig with two hubs; the current context is on the
// first, as a user with an exec plugin.
func hubKubeconfig() clientcmdapi.Config {
	return clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{
			"hub":   {Server: "https://hub.example.com:6443/", CertificateAuthority: "/etc/flotilla/hub-ca.crt", TLSServerName: "hub.internal"},
			"other": {Server: "https://other.example.com"},
		},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{
			"alice": {Exec: &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: "hub-login", Args: []string{"--user", "alice"}, InteractiveMode: clientcmdapi.IfAvailableExecInteractiveMode}},
			"admin": {Token: "secret-of-another-context"},
		},
		Contexts: map[string]*clientcmdapi.Context{
			"alice@hub":   {Cluster: "hub", AuthInfo: "alice", Namespace: "team-a"},
			"admin@other": {Cluster: "other", AuthInfo: "admin"},
		},
		CurrentContext: "alice@hub",
	}
}

func TestMemberKubeconfigReachesTheMemberThroughTheHub(t *testing.T) {
	out, err := MemberKubeconfig(hubKubeconfig(), "alice@hub", "member-1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := clientcmd.Write(out)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "kubeconfig-member-1", string(b))
}

func TestMemberKubeconfigRefusesAContextItCannotFollow(t *testing.T) {
	broken := hubKubeconfig()
	broken.Contexts["dangling"] = &clientcmdapi.Context{Cluster: "gone", AuthInfo: "alice"}
	for name, tc := range map[string]struct {
		context, want string
	}{
		"no such context":             {"nope", `the kubeconfig has no context "nope": pick one with --context`},
		"no current context":          {"", `the kubeconfig has no context "": pick one with --context`},
		"a context naming no cluster": {"dangling", `context "dangling" names cluster "gone", which the kubeconfig does not define`},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := MemberKubeconfig(broken, tc.context, "member-1"); err == nil || err.Error() != tc.want {
				t.Errorf("MemberKubeconfig = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestKubeconfigCommand(t *testing.T) {
	ctx := context.Background()
	mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-member"}}
	if err := env.Client.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, mc) })

	out, err := runCommand(t, "kubeconfig", "kubeconfig-member")
	if err != nil {
		t.Fatalf("kubeconfig: %v\n%s", err, out)
	}
	cfg, err := clientcmd.Load([]byte(out))
	if err != nil {
		t.Fatalf("the output is not a kubeconfig: %v\n%s", err, out)
	}
	want := strings.TrimSuffix(env.Config.Host, "/") + "/apis/proxy.flotilla.io/v1beta1/memberclusters/kubeconfig-member/proxy"
	if got := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster].Server; got != want {
		t.Errorf("server = %q, want %q", got, want)
	}
	if out, err := runCommand(t, "kubeconfig", "no-such-member"); err == nil || !strings.Contains(err.Error(), "member cluster \"no-such-member\" does not exist on this hub") {
		t.Errorf("kubeconfig of a member that does not exist: %v\n%s", err, out)
	}
}
