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

// Package framework runs Flotilla's end-to-end suites against a fleet provider.
// The kwok provider (tools/localfleet) runs everywhere, CI included.
package framework

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/poll"
)

// Provider is a fleet the suites run against.
type Provider interface {
	// Up creates the fleet: hub installed and running, members joined.
	Up(ctx context.Context) error
	// Down removes everything Up made.
	Down(ctx context.Context) error
	// HubKubeconfig is an admin kubeconfig of the hub cluster.
	HubKubeconfig() string
	// MemberKubeconfig is an admin kubeconfig of a member cluster.
	MemberKubeconfig(member string) string
	// Members are the member cluster names.
	Members() []string
}

func init() {
	ctrllog.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
}

// Scheme has every type the suites read.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(clusterv1beta1.AddToScheme(s))
	utilruntime.Must(placementv1beta1.AddToScheme(s))
	return s
}

// Client returns a controller-runtime client for a kubeconfig.
func Client(kubeconfig string) (client.Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("failed to load %s: %w", kubeconfig, err)
	}
	return client.New(cfg, client.Options{Scheme: Scheme()})
}

// Kubectl runs kubectl against a kubeconfig, returning combined output.
func Kubectl(ctx context.Context, kubeconfig, stdin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Eventually polls check every interval until it returns nil, failing the test
// with check's last error when timeout passes.
func Eventually(t testing.TB, timeout time.Duration, check func() error) {
	t.Helper()
	poll.Eventually(t, timeout, 250*time.Millisecond, check)
}

// Consistently checks that check keeps returning nil for the whole duration.
func Consistently(t testing.TB, duration time.Duration, check func() error) {
	t.Helper()
	poll.Consistently(t, duration, 250*time.Millisecond, check)
}

// Logf prints a progress line that `make e2e` keeps visible.
func Logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "e2e: "+format+"\n", args...)
}

// WatchClient returns a client that can watch, for a kubeconfig.
func WatchClient(kubeconfig string) (client.WithWatch, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("failed to load %s: %w", kubeconfig, err)
	}
	return client.NewWithWatch(cfg, client.Options{Scheme: Scheme()})
}
