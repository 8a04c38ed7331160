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

package tunnelserver

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// TestWorkChangesAreSentOnDemand: changes that come during the connect's
// sync wait for it; after it, every change is sent, by one sender at a time,
// and no sender is left waiting once nothing is pending.
func TestWorkChangesAreSentOnDemand(t *testing.T) {
	ms := &memberSession{pending: map[string]struct{}{}}
	var mu sync.Mutex
	got := map[string]int{}
	var running, overlapped atomic.Int32
	send := func(names []string) error {
		if running.Add(1) > 1 {
			overlapped.Add(1)
		}
		defer running.Add(-1)
		time.Sleep(time.Millisecond) // let marks pile up behind a running sender
		mu.Lock()
		defer mu.Unlock()
		for _, n := range names {
			got[n]++
		}
		return nil
	}

	ms.markChanged("during-sync")
	time.Sleep(10 * time.Millisecond)
	mu.Lock()
	if len(got) != 0 {
		t.Fatalf("a change was sent before the sync was done: %v", got)
	}
	mu.Unlock()

	ms.syncDone(send)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				ms.markChanged(fmt.Sprintf("w-%d-%d", i, j))
			}
		}()
	}
	wg.Wait()

	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		ms.mu.Lock()
		idle := !ms.sending && len(ms.pending) == 0
		ms.mu.Unlock()
		if n == 1+8*50 && idle {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sent %d of %d changes; sender idle: %v", n, 1+8*50, idle)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got["during-sync"] != 1 {
		t.Errorf("the change made during the sync was sent %d times, want 1", got["during-sync"])
	}
	if o := overlapped.Load(); o != 0 {
		t.Errorf("two senders ran at once %d times", o)
	}
}

func TestSamePropertiesComparesEveryField(t *testing.T) {
	// A field added to ClusterProperties must be compared by sameProperties.
	if n := reflect.TypeOf(tunnel.ClusterProperties{}).NumField(); n != 8 {
		t.Fatalf("ClusterProperties has %d fields; sameProperties compares 8: compare the new ones", n)
	}
	base := func() tunnel.ClusterProperties {
		return tunnel.ClusterProperties{NodeCount: 3, KubernetesVersion: "v1.37.1", Provider: "kwok", APIServerHealthy: true,
			Capacity: map[string]string{"cpu": "4"}, Allocatable: map[string]string{"cpu": "4"}, Available: map[string]string{"cpu": "2"}}
	}
	changes := map[string]func(*tunnel.ClusterProperties){
		"nodes":       func(p *tunnel.ClusterProperties) { p.NodeCount++ },
		"version":     func(p *tunnel.ClusterProperties) { p.KubernetesVersion = "v1.38.0" },
		"provider":    func(p *tunnel.ClusterProperties) { p.Provider = "kind" },
		"health":      func(p *tunnel.ClusterProperties) { p.APIServerHealthy = false },
		"message":     func(p *tunnel.ClusterProperties) { p.APIServerMessage = "timeout" },
		"capacity":    func(p *tunnel.ClusterProperties) { p.Capacity["memory"] = "8Gi" },
		"allocatable": func(p *tunnel.ClusterProperties) { p.Allocatable["cpu"] = "3" },
		"available":   func(p *tunnel.ClusterProperties) { delete(p.Available, "cpu") },
	}
	if !sameProperties(base(), base()) {
		t.Errorf("equal properties are not the same")
	}
	for name, change := range changes {
		p := base()
		change(&p)
		if sameProperties(base(), p) {
			t.Errorf("a change of %s went unnoticed", name)
		}
	}
}
