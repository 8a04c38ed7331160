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

package rollout

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var waveSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
	Name:    "flotilla_rollout_wave_seconds",
	Help:    "Time from the rolling update moving a cluster to new resources until they are available there: the length of one step of a wave.",
	Buckets: prometheus.ExponentialBuckets(0.25, 2, 12),
})

func init() { metrics.Registry.MustRegister(waveSeconds) }

// waveClock remembers when the rollout moved each binding, to observe
// flotilla_rollout_wave_seconds once the binding is ready on what it was moved to.
type waveClock struct {
	mu    sync.Mutex
	moved map[string]moveMark
}

type moveMark struct {
	snapshot string
	at       time.Time
}

func (w *waveClock) start(binding, snapshot string, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.moved == nil {
		w.moved = map[string]moveMark{}
	}
	w.moved[binding] = moveMark{snapshot: snapshot, at: at}
}

// ready observes the wave time of a binding that is ready on snapshot, once.
func (w *waveClock) ready(binding, snapshot string, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m, ok := w.moved[binding]
	if !ok || m.snapshot != snapshot {
		return
	}
	waveSeconds.Observe(now.Sub(m.at).Seconds())
	delete(w.moved, binding)
}

func (w *waveClock) forget(binding string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.moved, binding)
}
