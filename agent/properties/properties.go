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

package properties

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// Defaults of Options.
const (
	// DefaultInterval is how often a Collector refreshes the properties.
	DefaultInterval = 15 * time.Second
	// DefaultTimeout bounds one collection.
	DefaultTimeout = 10 * time.Second
)

// Resources are the resources summed into Capacity, Allocatable and Available.
var Resources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods}

// maxMessage bounds APIServerMessage.
const maxMessage = 512

// Options configure a Collector. The zero value is ready to use.
type Options struct {
	// Interval is how often Run refreshes the properties: it sums up the
	// member's nodes and pods (kept by informers, not listed) and asks its API
	// server for /readyz and its version.
	// Default: DefaultInterval (15s).
	Interval time.Duration

	// Timeout bounds one collection. Default: DefaultTimeout (10s).
	Timeout time.Duration

	// Logger receives the Collector's logs. Default: the logger in Run's
	// context, else none.
	Logger logr.Logger
}

func (o *Options) setDefaults() {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
}

// Collector gathers the properties of one member cluster. It is safe for
// concurrent use.
type Collector struct {
	// core and discovery, not the full clientset and informer factory, which
	// would link the clients and informers of every API group into the agent.
	core      corev1client.CoreV1Interface
	discovery discovery.DiscoveryInterface
	opts      Options

	// nodes and pods keep the member's nodes and running pods, trimmed to what
	// Summarize reads, from Run on; before, Collect lists them.
	nodes, pods cache.SharedIndexInformer

	mu sync.RWMutex
	// latest is the last collection; each part keeps its last known value
	// when collecting it fails.
	latest tunnel.ClusterProperties
}

// New returns a Collector for the member cluster that cfg connects to.
func New(cfg *rest.Config, opts Options) (*Collector, error) {
	opts.setDefaults()
	core, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create a client of the member cluster: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create a discovery client of the member cluster: %w", err)
	}
	c := &Collector{core: core, discovery: disc, opts: opts}
	// No resync: the sums are computed from the caches, which watches keep.
	c.nodes = cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return core.Nodes().List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return core.Nodes().Watch(ctx, o)
		},
	}, &corev1.Node{}, 0, cache.Indexers{})
	c.pods = cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = runningPods
			return core.Pods(metav1.NamespaceAll).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = runningPods
			return core.Pods(metav1.NamespaceAll).Watch(ctx, o)
		},
	}, &corev1.Pod{}, 0, cache.Indexers{})
	_ = c.nodes.SetTransform(trimNode)
	_ = c.pods.SetTransform(trimPod)
	return c, nil
}

// runningPods selects the pods that hold resources on their nodes.
var runningPods = "status.phase!=" + string(corev1.PodSucceeded) + ",status.phase!=" + string(corev1.PodFailed)

// trimNode keeps of a node what Summarize reads, so that the cache stays small.
func trimNode(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, ResourceVersion: n.ResourceVersion},
		Spec:       corev1.NodeSpec{ProviderID: n.Spec.ProviderID},
		Status:     corev1.NodeStatus{Capacity: n.Status.Capacity, Allocatable: n.Status.Allocatable},
	}, nil
}

// trimPod keeps of a pod what Summarize reads: its podUsage.
func trimPod(obj any) (any, error) {
	if p, ok := obj.(*corev1.Pod); ok {
		return usageOf(p), nil
	}
	return obj, nil
}

// Run collects the properties now and then every Interval until ctx is done.
func (c *Collector) Run(ctx context.Context) {
	// The first collection does not wait for the informers (it lists once), so
	// that the first heartbeats already say whether the member is healthy.
	go c.nodes.Run(ctx.Done())
	go c.pods.Run(ctx.Done())
	t := time.NewTicker(c.opts.Interval)
	defer t.Stop()
	for {
		c.Collect(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Latest returns the properties last collected, without waiting. Before the
// first collection they are all zero (and the API server is not healthy).
func (c *Collector) Latest() tunnel.ClusterProperties {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return copyProperties(c.latest)
}

// Collect gathers the properties once, bounded by Options.Timeout, stores
// them for Latest and returns them. A part that cannot be read keeps its
// last known value; the API server's health says why.
func (c *Collector) Collect(ctx context.Context) tunnel.ClusterProperties {
	log := c.opts.Logger
	if log.GetSink() == nil {
		log = logr.FromContextOrDiscard(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()

	next := c.Latest()
	next.APIServerHealthy, next.APIServerMessage = c.readyz(ctx)
	if v, err := c.discovery.ServerVersion(); err != nil {
		log.V(1).Info("Failed to get the member API server's version", "err", err)
	} else {
		next.KubernetesVersion = v.GitVersion
	}
	if err := c.collectResources(ctx, &next); err != nil {
		log.Error(err, "Failed to collect the member cluster's resources; reporting the last known values")
	}

	c.mu.Lock()
	c.latest = copyProperties(next)
	c.mu.Unlock()
	return next
}

// readyz asks the member API server whether it is ready.
func (c *Collector) readyz(ctx context.Context) (bool, string) {
	body, err := c.discovery.RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		msg := err.Error()
		if len(body) > 0 {
			msg = strings.TrimSpace(string(body))
		}
		return false, truncate("the member API server is not ready: "+msg, maxMessage)
	}
	return true, ""
}

// collectResources fills in the node count, provider and resource sums.
func (c *Collector) collectResources(ctx context.Context, p *tunnel.ClusterProperties) error {
	if c.nodes.HasSynced() && c.pods.HasSynced() {
		c.summarize(p, fromStore[corev1.Node](c.nodes.GetStore()), podsFromStore(c.pods.GetStore()))
		return nil
	}
	// Before Run: ResourceVersion "0" is served from the API server's cache.
	nodes, err := c.core.Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return fmt.Errorf("failed to list nodes: %w", err)
	}
	pods, err := c.core.Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		ResourceVersion: "0",
		FieldSelector:   runningPods,
	})
	if err != nil {
		return fmt.Errorf("failed to list pods: %w", err)
	}
	usage := make([]*podUsage, 0, len(pods.Items))
	for i := range pods.Items {
		usage = append(usage, usageOf(&pods.Items[i]))
	}
	c.summarize(p, nodes.Items, usage)
	return nil
}

func (c *Collector) summarize(p *tunnel.ClusterProperties, nodes []corev1.Node, pods []*podUsage) {
	s := summarize(nodes, pods)
	p.NodeCount = s.NodeCount
	p.Provider = s.Provider
	p.Capacity = s.Capacity
	p.Allocatable = s.Allocatable
	p.Available = s.Available
}

// fromStore returns the objects of an informer's store.
func fromStore[T any](store cache.Store) []T {
	items := store.List()
	out := make([]T, 0, len(items))
	for _, item := range items {
		if o, ok := item.(*T); ok {
			out = append(out, *o)
		}
	}
	return out
}

// podsFromStore returns the pods of the pod informer's store.
func podsFromStore(store cache.Store) []*podUsage {
	items := store.List()
	out := make([]*podUsage, 0, len(items))
	for _, item := range items {
		if u, ok := item.(*podUsage); ok {
			out = append(out, u)
		}
	}
	return out
}

func copyProperties(p tunnel.ClusterProperties) tunnel.ClusterProperties {
	p.Capacity = copyMap(p.Capacity)
	p.Allocatable = copyMap(p.Allocatable)
	p.Available = copyMap(p.Available)
	return p
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ") // one line
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
