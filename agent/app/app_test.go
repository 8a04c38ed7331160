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

package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/flotilla-io/flotilla/agent/session/sessiontest"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// env is the member cluster of the tests, and kubeconfig a file that
// connects to it.
var (
	env        *testenv.Env
	kube       kubernetes.Interface
	kubeconfig string
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr)))
	dir, err := os.MkdirTemp("", "agent-app-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := testenv.Run(m, testenv.Options{MemberCluster: true}, func(e *testenv.Env) (err error) {
		env = e
		if kube, err = kubernetes.NewForConfig(env.Config); err != nil {
			return err
		}
		kubeconfig = filepath.Join(dir, "member.kubeconfig")
		return writeKubeconfig(kubeconfig)
	})
	os.RemoveAll(dir)
	os.Exit(code)
}

func writeKubeconfig(path string) error {
	c := env.Config
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["member"] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: c.CAData}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: c.CertData, ClientKeyData: c.KeyData, Token: c.BearerToken}
	cfg.Contexts["member"] = &clientcmdapi.Context{Cluster: "member", AuthInfo: "admin"}
	cfg.CurrentContext = "member"
	return clientcmd.WriteToFile(*cfg, path)
}

// agent runs the agent command with args and returns its output and error.
func agent(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := NewCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := cmd.ExecuteContext(ctx)
	return out.String(), err
}

func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func TestCommandsRefuseBadInputWithOneLineThatNamesTheFix(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"join without --hub", []string{"join", "--token", sessiontest.Token}, "--hub is required"},
		{"join with an unknown flag", []string{"join", "--hubb", "x"}, "unknown flag: --hubb (see 'agent join --help')"},
		{"join with a malformed token", []string{"join", "--hub", "https://h:1", "--token", "x"}, "--token is malformed"},
		{"join with bad labels", []string{"join", "--hub", "https://h:1", "--token", sessiontest.Token, "--labels", "novalue"}, `--labels: label "novalue" is not key=value: use k=v,k2=v2`},
		{"join with --install and --print-helm", []string{"join", "--install", "--print-helm"}, "--install and --print-helm: choose one"},
		{"join with --print-helm and an unknown RBAC profile", []string{"join", "--print-helm", "--rbac-profile", "admin"}, `unknown RBAC profile "admin": use full or least-privilege`},
		{"join with a bad timeout", []string{"join", "--timeout", "soon"}, `invalid argument "soon" for "--timeout"`},
		{"run with a bad metrics address", []string{"run", "--metrics-bind-address", "nope"}, `--metrics-bind-address "nope" is not HOST:PORT, :PORT or 0 (disabled)`},
		{"run with an empty proxy identity prefix", []string{"run", "--proxy-identity-prefix", ""}, `--proxy-identity-prefix must not be empty`},
		{"run with a proxy identity prefix in system:", []string{"run", "--proxy-identity-prefix", "system:hub:"}, `--proxy-identity-prefix "system:hub:" is in the system: namespace`},
		{"run with arguments", []string{"run", "extra"}, `unknown command "extra" for "agent run"`},
		{"run before joining", []string{"run", "--kubeconfig", "KUBECONFIG", "--metrics-bind-address", "0", "--health-probe-bind-address", "0"}, "this cluster has not joined a hub: run `agent join` first"},
		{"leave before joining", []string{"leave", "--kubeconfig", "KUBECONFIG"}, "this cluster has not joined a hub"},
		{"run with a missing kubeconfig", []string{"run", "--kubeconfig", "/nonexistent"}, "cannot load --kubeconfig /nonexistent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string(nil), tt.args...)
			for i := range args {
				if args[i] == "KUBECONFIG" {
					args[i] = kubeconfig
				}
			}
			_, err := agent(t, args...)
			if err == nil {
				t.Fatalf("agent %v succeeded, want an error", args)
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("agent %v = %q, want one line containing %q", args, err, tt.want)
			}
		})
	}
}

func TestJoinRunAndLeave(t *testing.T) {
	hub := sessiontest.Start(t, sessiontest.Options{})
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}, Spec: corev1.NodeSpec{ProviderID: "kwok://node-1"}}
	if _, err := kube.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}

	out, err := agent(t, "join", "--hub", hub.URL(), "--token", sessiontest.Token, "--discovery-token-ca-cert-hash", hub.Hash,
		"--name", "member-1", "--labels", "env=dev,zone=eu", "--kubeconfig", kubeconfig)
	if err != nil {
		t.Fatalf("agent join failed: %v", err)
	}
	if want := "Next: agent run --kubeconfig " + kubeconfig; !strings.Contains(out, want) || strings.Count(out, "\n") != 1 {
		t.Errorf("agent join printed %q, want one line with %q", out, want)
	}

	metrics, health := freeAddress(t), freeAddress(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runErr := make(chan error, 1)
	go func() {
		runErr <- Run(ctx, &RunOptions{Kubeconfig: kubeconfig, MetricsBindAddress: metrics, HealthProbeBindAddress: health, PropertiesInterval: time.Second})
	}()

	s := hub.NextSession(t, 30*time.Second)
	if s.Hello.ClusterName != "member-1" {
		t.Errorf("Hello names %q, want member-1", s.Hello.ClusterName)
	}
	sessiontest.Eventually(t, 30*time.Second, func() error {
		hbs := s.Heartbeats()
		if len(hbs) == 0 || hbs[len(hbs)-1].Properties.NodeCount < 1 {
			return fmt.Errorf("no heartbeat with nodes yet (%d heartbeats)", len(hbs))
		}
		return nil
	})

	raw, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "app-config", "namespace": "default"}})
	work := &placementv1beta1.Work{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "flotilla-member-member-1"},
		Spec:       placementv1beta1.WorkSpec{Workload: placementv1beta1.WorkloadTemplate{Manifests: []placementv1beta1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}},
	}
	hash, err := s.Upsert(work)
	if err != nil {
		t.Fatal(err)
	}
	sessiontest.Eventually(t, 30*time.Second, func() error {
		for _, r := range s.Reports() {
			if r.WorkName == "app" && r.Hash == hash && strings.Contains(string(r.Status), `"type":"Applied","status":"True"`) {
				return nil
			}
		}
		return fmt.Errorf("no Applied report for Work app at %s: %d reports", hash, len(s.Reports()))
	})

	body := httpGet(t, "http://"+metrics+"/metrics")
	for _, want := range []string{"flotilla_agent_connected 1", "flotilla_agent_heartbeats_sent_total", "flotilla_agent_status_reports_sent_total",
		"flotilla_tunnel_frames_total", "flotilla_tunnel_handshakes_total", `flotilla_agent_apply_total{result="applied"}`} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics has no %q", want)
		}
	}
	if got := httpGet(t, "http://"+health+"/healthz"); got != "ok" {
		t.Errorf("/healthz = %q, want ok", got)
	}

	cancel()
	select {
	case err := <-runErr:
		if err != nil {
			t.Errorf("Run() = %v, want nil after the signal", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run() did not return after the signal")
	}
	sessiontest.Eventually(t, 10*time.Second, func() error {
		if s.Goodbye() == nil {
			return fmt.Errorf("no goodbye")
		}
		return nil
	})

	out, err = agent(t, "leave", "--kubeconfig", kubeconfig)
	if err != nil {
		t.Fatalf("agent leave failed: %v", err)
	}
	if !strings.Contains(out, `Member "member-1" left the hub`) || !strings.Contains(out, "removed 1 Work(s)") {
		t.Errorf("agent leave printed %q", out)
	}
	if got := hub.Leaves(); len(got) != 1 || got[0] != "member-1" {
		t.Errorf("the hub saw leaves %v, want member-1", got)
	}
	if _, err := kube.CoreV1().ConfigMaps("default").Get(context.Background(), "app-config", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Work's ConfigMap is still there after leave (err %v)", err)
	}
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url) //nolint:noctx // a test
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(body)
}
