//go:build kind

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

package kindsmoke

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/e2e/framework"
	"github.com/flotilla-io/flotilla/hub/cli"
)

// The hub users of the proxy smoke test, whom the hub's admin impersonates
// (--as), as docs/how-to/reach-members.md sets them up.
const (
	// smokeAlice may reach member-1 (hub RBAC) and edit namespace
	// smoke-proxy there (member RBAC, as flotilla:hub:smoke-alice).
	smokeAlice = "smoke-alice"
	// smokeBob is bound on the hub to a ClusterRole that does not exist: the
	// hub refuses him, and the review says why.
	smokeBob = "smoke-bob"
	// smokeProxyNamespace is alice's namespace on member-1.
	smokeProxyNamespace = "smoke-proxy"
)

// smokeHubRBAC is what the hub's administrator writes.
const smokeHubRBAC = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: smoke-reach-member-1
rules:
- apiGroups: [proxy.flotilla.io]
  resources: [memberclusters/proxy]
  resourceNames: [member-1]
  verbs: [get, create, update, patch, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: smoke-alice-reaches-member-1
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: smoke-reach-member-1}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: smoke-alice}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: smoke-bob-reaches-nothing
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: smoke-missing}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: smoke-bob}
`

// smokeMemberObjects is what member-1's administrator writes: alice's
// namespace, her rights there, and a pod to look at. Nothing can be pulled:
// the pod runs the etcd image every kubeadm node carries (image is filled in),
// which logs what it is asked to do.
const smokeMemberObjects = `apiVersion: v1
kind: Namespace
metadata:
  name: smoke-proxy
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: hub-alice-edits
  namespace: smoke-proxy
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: edit}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: "flotilla:hub:smoke-alice"}
---
apiVersion: v1
kind: Pod
metadata:
  name: etcd
  namespace: smoke-proxy
spec:
  containers:
  - name: etcd
    image: %s
    imagePullPolicy: Never
    command: [etcd, --data-dir=/var/lib/etcd, --listen-client-urls=http://0.0.0.0:2379, --advertise-client-urls=http://127.0.0.1:2379]
    volumeMounts: [{name: data, mountPath: /var/lib/etcd}]
  volumes: [{name: data, emptyDir: {}}]
`

// TestLogsAndExecThroughTheHub: with the kubeconfig `kubectl flotilla
// kubeconfig member-1` writes (the hub's kube-apiserver, its APIService, one
// of the two hub replicas, the agent's tunnel), a hub user follows a real
// pod's logs on the member, port-forwards to it and sees in the logs what the
// request through the port-forward did, and execs into it; a hub user the hub
// does not let through gets 403 with the SubjectAccessReview's reason.
func TestLogsAndExecThroughTheHub(t *testing.T) {
	ctx := context.Background()
	start := time.Now()
	// Requests reach the member through its agent's tunnel.
	framework.Eventually(t, 2*time.Minute, framework.MemberCondition(ctx, clientFor(t, provider.HubKubeconfig()), member, clusterv1beta1.ConditionAgentConnected, metav1.ConditionTrue))
	kubectlApply(t, provider.HubKubeconfig(), smokeHubRBAC)
	memberKC := provider.MemberKubeconfig(member)
	image := nodeImage(t, memberKC, "/etcd:")
	kubectlApply(t, memberKC, fmt.Sprintf(smokeMemberObjects, image))
	m := clientFor(t, memberKC)
	framework.Eventually(t, 2*time.Minute, func() error {
		pod := &corev1.Pod{}
		if err := m.Get(ctx, types.NamespacedName{Namespace: smokeProxyNamespace, Name: "etcd"}, pod); err != nil {
			return err
		}
		if len(pod.Status.ContainerStatuses) == 0 || pod.Status.ContainerStatuses[0].State.Running == nil {
			return fmt.Errorf("pod etcd is %s, its container not running yet", pod.Status.Phase)
		}
		return nil
	})
	kc := memberKubeconfigThroughHub(t)
	alice := func(args ...string) (string, error) {
		return framework.Kubectl(ctx, kc, "", append([]string{"--as", smokeAlice, "-n", smokeProxyNamespace}, args...)...)
	}

	t.Run("kubectl logs -f follows the pod and shows what a port-forward through the hub made it do", func(t *testing.T) {
		follow := followLogs(t, kc, smokeAlice, "etcd")
		// etcd logged its start before it ran: a first line says the
		// stream is open.
		follow.waitFor(t, func(string) bool { return true }, "a first line")
		port := portForward(t, kc, smokeAlice, "pod/etcd", "2379")
		// etcd's HTTP gateway: a defragmentation, which etcd logs.
		framework.Eventually(t, time.Minute, func() error {
			resp, err := http.Post("http://127.0.0.1:"+port+"/v3/maintenance/defragment", "application/json", strings.NewReader("{}"))
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("POST /v3/maintenance/defragment through the port-forward: %s %s", resp.Status, body)
			}
			return nil
		})
		follow.waitFor(t, func(l string) bool { return strings.Contains(l, "starting defragment") }, "etcd's log of the defragmentation")
	})

	t.Run("kubectl exec runs a command in the pod and passes its exit code on", func(t *testing.T) {
		out, err := alice("exec", "etcd", "--", "etcd", "--version")
		if err != nil || !strings.Contains(out, "etcd Version: ") {
			t.Fatalf("kubectl exec etcd -- etcd --version through the hub: %v\n%s", err, out)
		}
		framework.Logf("kubectl exec through the hub: %s", strings.Split(strings.TrimSpace(out), "\n")[0])
		out, err = alice("exec", "etcd", "--", "etcd", "--no-such-flag")
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 || !strings.Contains(out, "command terminated with exit code") {
			t.Errorf("a failing command through the hub: err %v, want kubectl to pass a non-zero exit on\n%s", err, out)
		}
	})

	t.Run("a hub user the hub does not let through gets 403 with the review's reason", func(t *testing.T) {
		out, err := framework.Kubectl(ctx, kc, "", "--as", smokeBob, "-n", smokeProxyNamespace, "logs", "etcd")
		if err == nil {
			t.Fatalf("bob read the pod's logs through the hub: %s", out)
		}
		for _, want := range []string{"Forbidden", `User "smoke-bob" cannot get resource "memberclusters/proxy" in API group "proxy.flotilla.io"`, `clusterrole.rbac.authorization.k8s.io "smoke-missing" not found`} {
			if !strings.Contains(out, want) {
				t.Errorf("bob's refusal does not say %q:\n%s", want, out)
			}
		}
	})
	framework.Logf("logs -f and exec through the hub checked in %s", time.Since(start).Round(time.Second))
}

// nodeImage returns the image of the member's node whose name holds part.
func nodeImage(t *testing.T, kubeconfig, part string) string {
	t.Helper()
	nodes := &corev1.NodeList{}
	if err := clientFor(t, kubeconfig).List(context.Background(), nodes); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		for _, img := range n.Status.Images {
			for _, name := range img.Names {
				if strings.Contains(name, part) && !strings.Contains(name, "@sha256:") {
					return name
				}
			}
		}
	}
	t.Fatalf("no node of the member carries an image named *%s*", part)
	return ""
}

// kubectlApply applies manifests with an admin kubeconfig and removes them
// when the test ends.
func kubectlApply(t *testing.T, kubeconfig, manifests string) {
	t.Helper()
	ctx := context.Background()
	if out, err := framework.Kubectl(ctx, kubeconfig, manifests, "apply", "-f", "-"); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := framework.Kubectl(ctx, kubeconfig, manifests, "delete", "--ignore-not-found", "--wait=false", "-f", "-"); err != nil {
			t.Errorf("kubectl delete: %v\n%s", err, out)
		}
	})
}

// memberKubeconfigThroughHub writes what `kubectl flotilla kubeconfig
// member-1` prints with the hub's admin kubeconfig, and returns its path.
func memberKubeconfigThroughHub(t *testing.T) string {
	t.Helper()
	cmd := cli.NewCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs([]string{"kubeconfig", member, "--kubeconfig", provider.HubKubeconfig()})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("kubectl flotilla kubeconfig %s: %v\n%s", member, err, errOut.String())
	}
	path := filepath.Join(t.TempDir(), member+".kubeconfig")
	if err := os.WriteFile(path, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// logFollower is a running `kubectl logs -f`.
type logFollower struct {
	lines  chan string
	stderr *bytes.Buffer
}

// followLogs runs `kubectl logs -f pod` as user with kubeconfig kc until the
// test ends.
func followLogs(t *testing.T, kc, user, pod string) *logFollower {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kc, "--as", user, "-n", smokeProxyNamespace, "logs", "-f", pod)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	f := &logFollower{lines: make(chan string, 1024), stderr: &bytes.Buffer{}}
	cmd.Stderr = f.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	go func() {
		defer close(f.lines)
		s := bufio.NewScanner(stdout)
		s.Buffer(make([]byte, 64*1024), 1024*1024)
		for s.Scan() {
			f.lines <- s.Text()
		}
	}()
	return f
}

// waitFor reads the followed logs until a line matches, for a minute.
func (f *logFollower) waitFor(t *testing.T, match func(string) bool, what string) {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case l, ok := <-f.lines:
			if !ok {
				t.Fatalf("kubectl logs -f through the hub ended before %s: %s", what, f.stderr.String())
			}
			if match(l) {
				return
			}
		case <-timeout:
			t.Fatalf("kubectl logs -f through the hub showed no %s within a minute: %s", what, f.stderr.String())
		}
	}
}

// portForward runs `kubectl port-forward target :port` as user with
// kubeconfig kc until the test ends, and returns the local port.
func portForward(t *testing.T, kc, user, target, port string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kc, "--as", user, "-n", smokeProxyNamespace, "port-forward", target, ":"+port)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	local := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			// Forwarding from 127.0.0.1:41235 -> 2379
			if rest, ok := strings.CutPrefix(s.Text(), "Forwarding from 127.0.0.1:"); ok {
				local <- strings.Fields(rest)[0]
			}
		}
		close(local)
	}()
	select {
	case p, ok := <-local:
		if !ok {
			t.Fatalf("kubectl port-forward %s through the hub ended: %s", target, stderr.String())
		}
		return p
	case <-time.After(time.Minute):
		t.Fatalf("kubectl port-forward %s through the hub did not start within a minute: %s", target, stderr.String())
	}
	return ""
}
