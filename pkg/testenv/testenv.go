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

package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/flotilla-io/flotilla/tools/toolchain"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// ModulePath is the module path of the Flotilla repository; RepoRoot looks for the
// go.mod that declares it.
const ModulePath = "github.com/flotilla-io/flotilla"

// AssetsEnvVar names the environment variable that points at the directory holding
// kube-apiserver and etcd.
const AssetsEnvVar = "KUBEBUILDER_ASSETS"

// Options configures Start. The zero value is ready to use.
type Options struct {
	// CRDDirectory is the directory of CRD manifests to install.
	// Default: manifests/crds in the repository root.
	CRDDirectory string

	// MemberCluster installs no CRDs (Run only): the server plays a member cluster,
	// which starts with the built-in kinds only.
	MemberCluster bool

	// BinaryAssetsDirectory is the directory holding kube-apiserver and etcd.
	// Default: $KUBEBUILDER_ASSETS if set, else the directory `make tools` builds them
	// into: ${XDG_CACHE_HOME:-$HOME/.cache}/flotilla/bin/kube-<kubernetes>-etcd-<etcd>,
	// with the versions pinned in tools/k8s/go.mod.
	BinaryAssetsDirectory string

	// StartTimeout bounds how long the control plane may take to start.
	// Default: 2 minutes.
	StartTimeout time.Duration

	// StopTimeout bounds how long the control plane may take to stop.
	// Default: 1 minute.
	StopTimeout time.Duration

	// Scheme is the scheme of the client. Default: NewScheme().
	Scheme *runtime.Scheme
}

// Env is a running test API server.
type Env struct {
	// Config connects to the API server as an administrator.
	Config *rest.Config
	// Client is a client (without a cache) for the API server, using Scheme.
	Client client.Client
	// Scheme knows the built-in Kubernetes kinds and the Flotilla kinds.
	Scheme *runtime.Scheme

	env *envtest.Environment
}

// NewScheme returns a scheme with the built-in Kubernetes kinds and the
// cluster.flotilla.io and placement.flotilla.io kinds.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(clusterv1beta1.AddToScheme(s))
	utilruntime.Must(placementv1beta1.AddToScheme(s))
	return s
}

// Start starts etcd and kube-apiserver, installs the CRDs and waits until they are
// served. Call Stop when done.
func Start(opts Options) (*Env, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(opts.BinaryAssetsDirectory, bin)); err != nil {
			return nil, fmt.Errorf("%s not found in %s: run `make tools` to build the pinned control-plane binaries, or set %s to a directory holding kube-apiserver and etcd",
				bin, opts.BinaryAssetsDirectory, AssetsEnvVar)
		}
	}

	te := &envtest.Environment{
		BinaryAssetsDirectory:    opts.BinaryAssetsDirectory,
		CRDDirectoryPaths:        []string{opts.CRDDirectory},
		ErrorIfCRDPathMissing:    true,
		Scheme:                   opts.Scheme,
		ControlPlaneStartTimeout: opts.StartTimeout,
		ControlPlaneStopTimeout:  opts.StopTimeout,
	}
	cfg, err := te.Start()
	if err != nil {
		// Start may have started some processes before failing.
		_ = te.Stop()
		return nil, fmt.Errorf("failed to start the test API server: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: opts.Scheme})
	if err != nil {
		_ = te.Stop()
		return nil, fmt.Errorf("failed to create a client for the test API server: %w", err)
	}
	return &Env{Config: cfg, Client: c, Scheme: opts.Scheme, env: te}, nil
}

// Stop stops the API server and etcd. It is safe to call more than once.
func (e *Env) Stop() error {
	if e == nil || e.env == nil {
		return nil
	}
	te := e.env
	e.env = nil
	if err := te.Stop(); err != nil {
		return fmt.Errorf("failed to stop the test API server: %w", err)
	}
	return nil
}

func (o *Options) setDefaults() error {
	var root string
	needRoot := o.CRDDirectory == "" || (o.BinaryAssetsDirectory == "" && os.Getenv(AssetsEnvVar) == "")
	if needRoot {
		r, err := RepoRoot()
		if err != nil {
			return err
		}
		root = r
	}
	if o.CRDDirectory == "" {
		o.CRDDirectory = filepath.Join(root, "manifests", "crds")
	}
	if o.BinaryAssetsDirectory == "" {
		o.BinaryAssetsDirectory = os.Getenv(AssetsEnvVar)
	}
	if o.BinaryAssetsDirectory == "" {
		dir, err := toolchain.KubeDir(root)
		if err != nil {
			return err
		}
		o.BinaryAssetsDirectory = dir
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 2 * time.Minute
	}
	if o.StopTimeout == 0 {
		o.StopTimeout = time.Minute
	}
	if o.Scheme == nil {
		o.Scheme = NewScheme()
	}
	return nil
}

// RepoRoot returns the root of the Flotilla repository: the nearest directory, from
// the working directory up, whose go.mod declares ModulePath. Tests run in their
// package's directory, so this works from any package of the repository.
func RepoRoot() (string, error) {
	return toolchain.RepoRoot()
}
