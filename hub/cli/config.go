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
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	planv1beta1 "github.com/flotilla-io/flotilla/apis/plan/v1beta1"
)

// Color values of --color.
const (
	ColorAuto   = "auto"
	ColorAlways = "always"
	ColorNever  = "never"
)

// Config holds what every command shares: the standard kubeconfig flags
// (--kubeconfig, --context, --cluster, --user, --server, --token, -n/--namespace,
// ...), the colour choice and the output streams.
type Config struct {
	// Out and ErrOut are where commands write. Default: os.Stdout and os.Stderr.
	Out, ErrOut io.Writer
	// Color is auto (colour when Out is a terminal), always or never.
	// Default: auto.
	Color string
	// Now is the clock ages are computed from. Default: time.Now.
	Now func() time.Time

	loading   *clientcmd.ClientConfigLoadingRules
	overrides *clientcmd.ConfigOverrides
	// namespaceSet is whether -n/--namespace was given; set by AddFlags.
	namespaceSet func() bool
}

// NewConfig returns a Config with every default filled in.
func NewConfig() *Config {
	return &Config{
		Out:          os.Stdout,
		ErrOut:       os.Stderr,
		Color:        ColorAuto,
		Now:          time.Now,
		loading:      clientcmd.NewDefaultClientConfigLoadingRules(),
		overrides:    &clientcmd.ConfigOverrides{},
		namespaceSet: func() bool { return false },
	}
}

// AddFlags binds the kubeconfig flags. withNamespace adds -n/--namespace, which
// makes the placement commands use ResourcePlacements in that namespace.
func (c *Config) AddFlags(fs *pflag.FlagSet, withNamespace bool) {
	fs.StringVar(&c.loading.ExplicitPath, clientcmd.RecommendedConfigPathFlag, c.loading.ExplicitPath,
		"Path of the hub cluster's kubeconfig (default: $KUBECONFIG, ~/.kube/config, or the in-cluster config).")
	flags := clientcmd.RecommendedConfigOverrideFlags("")
	if !withNamespace {
		flags.ContextOverrideFlags.Namespace = clientcmd.FlagInfo{}
	}
	clientcmd.BindOverrideFlags(c.overrides, fs, flags)
	if withNamespace {
		c.namespaceSet = func() bool {
			f := fs.Lookup(flags.ContextOverrideFlags.Namespace.LongName)
			return f != nil && f.Changed
		}
	}
}

// AddColorFlag binds --color.
func (c *Config) AddColorFlag(fs *pflag.FlagSet) {
	fs.StringVar(&c.Color, "color", c.Color, "Colour the output: auto (when the output is a terminal), always or never.")
}

// Namespace returns the namespace -n selected, and whether one was.
func (c *Config) Namespace() (string, bool) {
	if !c.namespaceSet() {
		return "", false
	}
	return c.overrides.Context.Namespace, true
}

// RESTConfig loads the hub's client config.
func (c *Config) RESTConfig() (*rest.Config, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(c.loading, c.overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("failed to load a kubeconfig for the hub cluster: %w", err)
	}
	return cfg, nil
}

// Client returns a client of the hub cluster that knows Flotilla's kinds.
func (c *Config) Client() (client.Client, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	cl, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return nil, fmt.Errorf("failed to create a client for %s: %w", cfg.Host, err)
	}
	return cl, nil
}

// Dynamic returns a dynamic client of the hub cluster, for kinds this binary may
// not know, and a client to find their REST mapping.
func (c *Config) Dynamic() (dynamic.Interface, client.Client, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, nil, err
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to create a client for %s: %w", cfg.Host, err)
	}
	cl, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return nil, nil, fmt.Errorf("failed to create a client for %s: %w", cfg.Host, err)
	}
	return dc, cl, nil
}

// colored reports whether output is coloured.
func (c *Config) colored() (bool, error) {
	switch c.Color {
	case ColorAlways:
		return true, nil
	case ColorNever:
		return false, nil
	case ColorAuto, "":
		f, ok := c.Out.(*os.File)
		return ok && term.IsTerminal(int(f.Fd())) && os.Getenv("NO_COLOR") == "", nil
	}
	return false, fmt.Errorf("--color must be auto, always or never, got %q", c.Color)
}

// readSetup is what every read-only command starts with: a client of the hub
// and the painter of its output.
func (c *Config) readSetup() (client.Client, painter, error) {
	cl, err := c.Client()
	if err != nil {
		return nil, painter{}, err
	}
	colored, err := c.colored()
	if err != nil {
		return nil, painter{}, err
	}
	return cl, painter{on: colored}, nil
}

func (c *Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Scheme returns the kinds the commands read and write.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(clusterv1beta1.AddToScheme(s))
	utilruntime.Must(placementv1beta1.AddToScheme(s))
	utilruntime.Must(planv1beta1.AddToScheme(s))
	return s
}
